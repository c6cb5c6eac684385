// Package zshell is a stand-in Zephyr shell with zperf, for tests: it
// talks as a real board's UART does and runs the traffic through the zperf
// stand-ins of internal/testutil/standin on loopback.
//
// What it reproduces, per syntax (Options.Version):
//
//   - the terminal: a green prompt "ESC[1;32muart:~$ ESC[m", yellow warnings
//     (the reset comes with the next output), red errors, CR LF line ends,
//     and output that arrives while the prompt is shown printed as Zephyr's
//     shell does: erase the prompt (ESC[8D ESC[J), print, draw it again, one
//     shell_fprintf call at a time, so one report line comes split by
//     redraws;
//   - log lines "[00:00:06.730,000] ESC[0m<inf> net_zperf: …ESC[0m" (3.x and
//     later);
//   - the version: "kernel version" answers "Zephyr version X.Y.Z", the
//     banner says "*** Booting Zephyr OS build zephyr-vX.Y.Z ***";
//   - the zperf commands and report texts of that version, as read from
//     the zperf sources: 2.x (samples/net/zperf: 1024-based K and Kbps, no
//     download stop, a server listens until reset and a second start says
//     "UDP server already started!", the legacy 12-byte UDP stand-ins),
//     3.x (subsys/net/lib/zperf as of 3.4: download stop, the IPv6-first
//     note "Invalid IPv6 address …" in yellow for an IPv4 peer, the 12-byte
//     stand-ins) and current (4.2 and later: the 16-byte stand-ins, "TCP
//     upload will ignore <baud rate> argument" for a TCP rate).
//
// Options.Iperf3 makes a zperf built for iperf3 (CONFIG_NET_ZPERF_IPERF3,
// see iperf3.go): the same commands and reports, iperf3 on the wire
// through wirebench's own iperf3 server and client, default port 5201.
//
// Options.NoZperf makes a build without zperf: every zperf command is
// answered "zperf: command not found".
//
// Every report the shell prints is also sent on Shell.Counted with what
// the stand-in behind it counted, so a test can check the parsed figures.
package zshell

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a stand-in shell.
type Options struct {
	// Version is the Zephyr version it reports, e.g. "2.7.6", "3.4.0",
	// "4.3.0" (default "3.4.0"); it picks the zperf syntax.
	Version string
	// NoZperf answers every zperf command "zperf: command not found".
	NoZperf bool
	// Iperf3 makes zperf speak iperf3 (default Version then "4.3.0").
	Iperf3 bool
	// FramesPerSecond, above 0, gives the board's UDP receive path (zperf
	// udp download) a frame-rate limit: what arrives above it is dropped
	// (standin.UDPServerOptions.FramesPerSecond).
	FramesPerSecond float64
}

// Counted is what the stand-in behind one report counted.
type Counted struct {
	Proto    string // "udp" or "tcp"
	Role     string // the device's: "server" (download) or "client" (upload)
	Bytes    int64
	Duration time.Duration
	// Packets is what the report prints as its packet count: received
	// (server) or the server's count from the peer's report (UDP client),
	// writes (TCP client).
	Packets, Lost, OutOfOrder int64
	JitterUS                  int64
}

// Shell is a running stand-in shell.
type Shell struct {
	// Counted receives one entry per report printed (buffered).
	Counted chan Counted

	o     Options
	major int
	minor int
	ctx   context.Context
	start time.Time
	w     io.Writer

	mu     sync.Mutex // guards the terminal state and writes
	color  string
	prompt bool // the prompt is the last thing shown (idle shell)

	smu     sync.Mutex
	servers map[string]*server // by protocol
	i3      *i3Server          // the iperf3 mode's shared listener
}

// server is a zperf download (device server) listening on a port.
type server struct {
	port   string
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{} // closed once the first stand-in listens
}

// legacy says whether the shell speaks the 2.x sample's syntax.
func (s *Shell) legacy() bool { return s.major < 3 || s.major == 3 && s.minor < 3 }

// modern says whether its UDP uses the 16-byte header (4.2 and later).
func (s *Shell) modern() bool { return s.major > 4 || s.major == 4 && s.minor >= 2 }

// kilo is the shell's K: 1024 in the 2.x sample, else 1000.
func (s *Shell) kilo() uint64 {
	if s.legacy() {
		return 1024
	}
	return 1000
}

// Serve runs the shell on rw until rw fails or ctx ends. Nothing is printed
// before the first line arrives (a pty echoes what is printed into it until
// its other side is opened raw).
func Serve(ctx context.Context, rw io.ReadWriter, o Options) *Shell {
	if o.Version == "" && o.Iperf3 {
		o.Version = "4.3.0"
	}
	if o.Version == "" {
		o.Version = "3.4.0"
	}
	s := &Shell{Counted: make(chan Counted, 64), o: o, ctx: ctx, start: time.Now(), w: rw, servers: map[string]*server{}}
	v := strings.Split(o.Version, ".")
	s.major, _ = strconv.Atoi(v[0])
	if len(v) > 1 {
		s.minor, _ = strconv.Atoi(v[1])
	}
	go s.run(rw)
	return s
}

func (s *Shell) run(r io.Reader) {
	rd := bufio.NewReader(r)
	if _, err := rd.ReadString('\n'); err != nil {
		return
	}
	banner := "*** Booting Zephyr OS build zephyr-v" + s.o.Version + " ***\n"
	if s.legacy() {
		banner = "*** Booting Zephyr OS build zephyr-v" + s.o.Version + "  ***\n"
	}
	s.sync("", banner)
	s.drawPrompt()
	for {
		line, err := rd.ReadString('\n')
		if err != nil || s.ctx.Err() != nil {
			s.stopAll()
			return
		}
		line = strings.TrimRight(line, "\r\n")
		s.sync("", line+"\n") // the shell echoes what is typed
		s.command(strings.Fields(line))
		s.drawPrompt()
	}
}

// SGR colours of the Zephyr shell.
const (
	normal  = "\x1b[m"
	warning = "\x1b[1;33m"
	errorC  = "\x1b[1;31m"
	green   = "\x1b[1;32m"
)

// writeLocked prints text in colour c (CR LF line ends), switching colour
// first when it changes.
func (s *Shell) writeLocked(c, text string) {
	if c == "" {
		c = normal
	}
	out := ""
	if c != s.color {
		out = c
		s.color = c
	}
	_, _ = io.WriteString(s.w, out+strings.ReplaceAll(text, "\n", "\r\n"))
}

// sync prints the output of the command being run.
func (s *Shell) sync(c, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prompt = false
	s.writeLocked(c, text)
}

func (s *Shell) drawPrompt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = io.WriteString(s.w, green+"uart:~$ "+normal)
	s.color, s.prompt = normal, true
}

// async prints output from another thread (a server's session): with the
// prompt shown, Zephyr's shell erases it, prints and draws it again.
func (s *Shell) async(c, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.prompt {
		s.writeLocked(c, text)
		return
	}
	_, _ = io.WriteString(s.w, "\x1b[8D\x1b[J")
	s.writeLocked(c, text)
	_, _ = io.WriteString(s.w, green+"uart:~$ "+normal)
	s.color = normal
}

// log prints a log line of the net_zperf module, as the logging backend on
// the shell's UART does.
func (s *Shell) log(text string) {
	up := time.Since(s.start) + 6*time.Second
	s.sync("", fmt.Sprintf("[%02d:%02d:%02d.%03d,%03d] \x1b[0m<inf> net_zperf: %s\x1b[0m\n",
		int(up.Hours()), int(up.Minutes())%60, int(up.Seconds())%60, up.Milliseconds()%1000, up.Microseconds()%1000, text))
}

func (s *Shell) command(f []string) {
	if len(f) == 0 {
		return
	}
	switch {
	case f[0] == "help":
		s.sync("", "Please press the <Tab> button to see all available commands.\nYou can also use the <Tab> button to prompt or auto-complete all commands or its subcommands.\n\nAvailable commands:\n  clear    :Clear screen.\n  kernel   :Kernel commands\n  net      :Networking commands\n")
		if !s.o.NoZperf {
			s.sync("", "  zperf    :Zperf commands\n")
		}
	case f[0] == "kernel" && len(f) > 1 && f[1] == "version":
		s.sync("", "Zephyr version "+s.o.Version+"\n")
	case f[0] == "zperf" && !s.o.NoZperf:
		s.zperf(f[1:])
	default:
		s.sync(errorC, f[0]+": command not found\n")
	}
}

func (s *Shell) zperf(f []string) {
	if len(f) < 2 || f[0] != "udp" && f[0] != "tcp" {
		s.sync(errorC, "zperf: wrong parameter count\n")
		return
	}
	proto, verb, args := f[0], f[1], f[2:]
	switch verb {
	case "download":
		if s.o.Iperf3 {
			s.download3(proto, args)
			return
		}
		s.download(proto, args)
	case "upload":
		s.upload(proto, args)
	default:
		s.sync(errorC, proto+": command not found\n")
	}
}

// Number prints v like zperf's print_number: two truncated decimals of the
// largest unit the value reaches (div, units: the unit table, ending with
// a divisor of 0 for the plain unit).
func Number(v uint64, div []uint64, units []string) string {
	for i, d := range div {
		if d == 0 {
			return fmt.Sprintf("%d %s", v, units[i])
		}
		if v >= d {
			return fmt.Sprintf("%d.%02d %s", v/d, v%d*100/d, units[i])
		}
	}
	return ""
}

func usec(us int64) string {
	return Number(uint64(max(us, 0)), []uint64{60e6, 1e6, 1e3, 0}, []string{"m", "s", "ms", "us"})
}

func (s *Shell) kbps(k uint64) string {
	return Number(k, []uint64{s.kilo(), 0}, []string{"Mbps", "Kbps"})
}

// rateKbps is zperf's rate in its own kbit (1000 or 1024 bits) per second.
func (s *Shell) rateKbps(bytes int64, d time.Duration) uint64 {
	us := d.Microseconds()
	if us <= 0 {
		return 0
	}
	return uint64(bytes) * 8 * 1e6 / (uint64(us) * s.kilo())
}

// parseNumber is zperf's parse_number: a number with an optional K or M
// suffix of the shell's kilo.
func (s *Shell) parseNumber(a string) uint64 {
	i := 0
	for i < len(a) && a[i] >= '0' && a[i] <= '9' {
		i++
	}
	v, _ := strconv.ParseUint(a[:i], 10, 64)
	switch strings.ToUpper(a[i:min(i+1, len(a))]) {
	case "M":
		return v * s.kilo() * s.kilo()
	case "K":
		return v * s.kilo()
	}
	return v
}
