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
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/standin"
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

func (s *Shell) download(proto string, args []string) {
	P := strings.ToUpper(proto)
	port := "5001"
	if len(args) > 0 {
		port = args[0]
	}
	s.smu.Lock()
	running := s.servers[proto]
	s.smu.Unlock()
	if port == "stop" && !s.legacy() {
		if running == nil {
			s.sync(warning, P+" server not running!\n")
			return
		}
		s.stop(proto)
		s.sync("", P+" server stopped\n")
		return
	}
	if port == "stop" {
		port = "0" // the 2.x sample has no stop: strtoul("stop") is 0
	}
	if running != nil {
		select { // a server between two sessions is back before it answers
		case <-running.ready:
		case <-time.After(2 * time.Second):
		}
		s.sync(warning, P+" server already started!\n")
		return
	}
	if s.legacy() {
		s.sync("", "Binding to 127.0.0.1\n")
		s.sync("", "Listening on port "+port+"\n")
	} else {
		s.log("Binding to 127.0.0.1")
		s.log("Listening on port " + port)
	}
	srv := &server{port: port, done: make(chan struct{}), ready: make(chan struct{})}
	ctx, cancel := context.WithCancel(s.ctx)
	srv.cancel = cancel
	up := make(chan error, 1)
	go s.serve(ctx, proto, srv, up)
	if err := <-up; err != nil {
		cancel()
		s.sync(errorC, "Failed to start "+P+" server!\n")
		return
	}
	s.smu.Lock()
	s.servers[proto] = srv
	s.smu.Unlock()
	s.sync("", P+" server started on port "+port+"\n")
}

// serve runs one stand-in session after another on the port until ctx
// ends; up gets the first listen's error.
func (s *Shell) serve(ctx context.Context, proto string, srv *server, up chan<- error) {
	defer close(srv.done)
	addr := "127.0.0.1:" + srv.port
	first := true
	for ctx.Err() == nil {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		var wait func() (Counted, bool)
		var err error
		if proto == "udp" {
			wait, err = s.udpServer(sctx, addr)
		} else {
			wait, err = s.tcpServer(sctx, addr)
		}
		if first {
			up <- err
			first = false
			close(srv.ready)
		}
		if err != nil {
			cancel()
			if ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond) // the port is being released
			}
			continue
		}
		c, ok := wait()
		cancel()
		if ok {
			s.count(c)
		}
	}
}

func (s *Shell) udpServer(ctx context.Context, addr string) (func() (Counted, bool), error) {
	open := standin.ZperfOldUDPServer
	if s.modern() {
		open = standin.ZperfNewUDPServer
	}
	srv, err := open(ctx, addr, standin.UDPServerOptions{})
	if err != nil {
		return nil, err
	}
	return func() (Counted, bool) {
		res, err := srv.Wait()
		if err != nil || !res.Completed {
			if ctx.Err() == nil {
				s.async(errorC, "UDP session error.\n")
			}
			return Counted{}, false
		}
		c := Counted{Proto: "udp", Role: "server", Bytes: int64(res.Bytes), Duration: res.Duration, Packets: res.Counted,
			Lost: int64(res.Lost), OutOfOrder: int64(res.OutOfOrder), JitterUS: res.JitterUS}
		lost, ooo := c.Lost, c.OutOfOrder
		if s.legacy() {
			// The 2.x sample prints each under the other's name.
			lost, ooo = ooo, lost
		}
		// One shell_fprintf at a time, each redrawing the prompt.
		for _, chunk := range []string{"New session started.\n", "End of session!\n",
			" duration:\t\t", usec(res.Duration.Microseconds()), "\n",
			fmt.Sprintf(" received packets:\t%d\n", c.Packets),
			fmt.Sprintf(" nb packets lost:\t%d\n", lost),
			fmt.Sprintf(" nb packets outorder:\t%d\n", ooo),
			" jitter:\t\t\t", usec(c.JitterUS), "\n",
			" rate:\t\t\t", s.kbps(s.rateKbps(c.Bytes, c.Duration)), "\n"} {
			s.async("", chunk)
		}
		return c, true
	}, nil
}

func (s *Shell) tcpServer(ctx context.Context, addr string) (func() (Counted, bool), error) {
	srv, err := standin.TCPSink(ctx, addr, standin.TCPServerOptions{Idle: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	return func() (Counted, bool) {
		res, err := srv.Wait()
		if err != nil {
			if ctx.Err() == nil {
				s.async(errorC, "TCP session error.\n")
			}
			return Counted{}, false
		}
		c := Counted{Proto: "tcp", Role: "server", Bytes: res.Bytes, Duration: res.Duration}
		for _, chunk := range []string{"New TCP session started.\n", "TCP session ended\n",
			" Duration:\t\t", usec(res.Duration.Microseconds()), "\n",
			" rate:\t\t\t", s.kbps(s.rateKbps(c.Bytes, c.Duration)), "\n"} {
			s.async("", chunk)
		}
		return c, true
	}, nil
}

// count sends c on Counted unless nobody reads it.
func (s *Shell) count(c Counted) {
	select {
	case s.Counted <- c:
	default:
	}
}

func (s *Shell) stop(proto string) {
	s.smu.Lock()
	srv := s.servers[proto]
	delete(s.servers, proto)
	s.smu.Unlock()
	if srv != nil {
		srv.cancel()
		<-srv.done
	}
}

func (s *Shell) stopAll() {
	s.stop("udp")
	s.stop("tcp")
	s.smu.Lock()
	i3 := s.i3
	s.i3 = nil
	s.smu.Unlock()
	if i3 != nil {
		i3.cancel()
		<-i3.done
	}
}

func (s *Shell) upload(proto string, args []string) {
	async := false
	if !s.legacy() && len(args) > 0 && args[0] == "-a" {
		// 3.x and later: the shell returns at once and the report comes
		// from the upload's thread, around prompt redraws.
		async, args = true, args[1:]
	}
	if len(args) < 1 {
		s.sync(warning, "Not enough parameters.\n")
		s.sync("", "upload - <dest ip> <dest port> <duration> <packet size>[K]\n")
		return
	}
	host, port, secs, size := args[0], "5001", uint64(1), uint64(256)
	if s.o.Iperf3 {
		port = i3DefaultPort
	}
	if len(args) > 1 {
		port = args[1]
		s.sync("", "Remote port is "+port+"\n")
	}
	if ip := net.ParseIP(host); ip == nil {
		// (The 2.x sample has no -a: "-a" is taken for the host.)
		s.sync(warning, "Invalid IPv6 address "+host+"\n")
		s.sync(warning, "Invalid IPv4 address "+host+"\n")
		s.sync(warning, "Please specify the IP address of the remote server.\n")
		return
	} else if ip.To4() != nil && !s.modern() {
		// A dual-stack build tries IPv6 first and says so.
		s.sync(warning, "Invalid IPv6 address "+host+"\n")
	}
	s.sync("", "Connecting to "+host+"\n")
	if len(args) > 2 {
		secs, _ = strconv.ParseUint(args[2], 10, 64)
	}
	if len(args) > 3 {
		size = s.parseNumber(args[3])
	}
	rate := uint64(10)
	if len(args) > 4 {
		rate = (s.parseNumber(args[4]) + s.kilo() - 1) / s.kilo()
		if proto == "tcp" && s.modern() {
			s.sync(warning, "TCP upload will ignore <baud rate> argument\n")
		}
	}
	s.sync("", "Duration:\t"+usec(int64(secs)*1e6)+"\n")
	s.sync("", fmt.Sprintf("Packet size:\t%d bytes\n", size))
	s.sync("", fmt.Sprintf("Rate:\t\t%d kbps\n", rate))
	s.sync("", "Starting...\n")
	addr := net.JoinHostPort(host, port)
	d := time.Duration(secs) * time.Second
	ctx, cancel := context.WithTimeout(s.ctx, d+time.Minute)
	out := s.sync
	if async {
		out = s.async
	}
	if s.o.Iperf3 && proto == "tcp" {
		p, _ := strconv.Atoi(port)
		run := func() { defer cancel(); s.upload3(ctx, proto, host, p, d, int(size), 0, out) }
		if async {
			go run()
		} else {
			run()
		}
		return
	}
	if proto == "tcp" {
		run := func() { defer cancel(); s.tcpUpload(ctx, addr, d, int(size), out) }
		if async {
			go run()
		} else {
			run()
		}
		return
	}
	s.sync("", "Rate:\t\t"+s.kbps(rate)+"\n")
	if !s.legacy() {
		pd := size * 8 * 1e6 / max(rate*s.kilo(), 1)
		if pd > 1000 {
			s.sync("", fmt.Sprintf("Packet duration %d ms\n", pd/1000))
		} else {
			s.sync("", fmt.Sprintf("Packet duration %d us\n", pd))
		}
	}
	run := func() { defer cancel(); s.udpUpload(ctx, addr, d, int(size), float64(rate*s.kilo()), out) }
	if s.o.Iperf3 {
		p, _ := strconv.Atoi(port)
		run = func() { defer cancel(); s.upload3(ctx, proto, host, p, d, int(size), float64(rate*s.kilo()), out) }
	}
	if async {
		go run()
	} else {
		run()
	}
}

// udpUpload runs the UDP client and prints its report through out (sync,
// or async for -a), one shell_fprintf at a time.
func (s *Shell) udpUpload(ctx context.Context, addr string, d time.Duration, size int, bps float64, out func(c, text string)) {
	run := standin.ZperfOldUDPClient
	if s.modern() {
		run = standin.ZperfNewUDPClient
	}
	start := time.Now()
	res, err := run(ctx, addr, standin.UDPClientOptions{Duration: d, RateBps: bps, Length: size})
	el := time.Since(start)
	if err != nil {
		out(errorC, "UDP upload failed (-5)\n")
		return
	}
	var c Counted
	c.Proto, c.Role = "udp", "client"
	out("", "-\nUpload completed!\n")
	rp := res.Report
	if rp != nil {
		us := int64(rp.StopSec)*1e6 + int64(rp.StopUsec)
		c.Bytes, c.Duration = int64(rp.TotalLen()), time.Duration(us)*time.Microsecond
		c.Packets, c.Lost, c.OutOfOrder = int64(rp.Datagrams), int64(rp.ErrorCnt), int64(rp.OutOrderCnt)
		c.JitterUS = int64(rp.Jitter1)*1e6 + int64(rp.Jitter2)
	}
	serverKbps := s.rateKbps(c.Bytes, c.Duration)
	if serverKbps == 0 {
		out(errorC, "LAST PACKET NOT RECEIVED!!!\n")
	}
	out("", "Statistics:\t\tserver\t(client)\n")
	for _, chunk := range []string{"Duration:\t\t", usec(c.Duration.Microseconds()), "\t(", usec(el.Microseconds()), ")\n"} {
		out("", chunk) // print_number is a call of its own
	}
	out("", fmt.Sprintf("Num packets:\t\t%d\t(%d)\n", c.Packets, res.DataPackets))
	out("", fmt.Sprintf("Num packets out order:\t%d\n", c.OutOfOrder))
	out("", fmt.Sprintf("Num packets lost:\t%d\n", c.Lost))
	for _, chunk := range []string{"Jitter:\t\t\t", usec(c.JitterUS), "\n", "Rate:\t\t\t", s.kbps(serverKbps), "\t(", s.kbps(s.rateKbps(res.DataBytes, el)), ")\n"} {
		out("", chunk)
	}
	s.count(c)
}

// tcpUpload runs the TCP client and prints its report through out.
func (s *Shell) tcpUpload(ctx context.Context, addr string, d time.Duration, size int, out func(c, text string)) {
	start := time.Now()
	res, err := standin.ZperfTCPClient(ctx, addr, standin.TCPClientOptions{Duration: d, WriteLen: size})
	el := time.Since(start)
	if err != nil {
		out(errorC, "TCP upload failed (-111)\n")
		return
	}
	c := Counted{Proto: "tcp", Role: "client", Bytes: int64(res.Writes) * int64(size), Duration: el, Packets: res.Writes}
	out("", "-\nUpload completed!\n")
	out("", "Duration:\t")
	out("", usec(el.Microseconds()))
	out("", "\n")
	out("", fmt.Sprintf("Num packets:\t%d\n", res.Writes))
	out("", "Num errors:\t0 (retry or fail)\n")
	out("", "Rate:\t\t")
	out("", s.kbps(s.rateKbps(int64(res.Writes)*int64(size), el)))
	out("", "\n")
	s.count(c)
}
