package dut

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.bug.st/serial"

	"github.com/wirebench/wirebench/internal/labgrid"
)

// Spec is a parsed --dut value.
type Spec struct {
	Kind   string // "serial", "telnet", "labgrid" or "cmd"
	Target string // device path, host:port, PLACE@HOST:PORT or command line
	Baud   int    // serial only
}

// DefaultBaud is the serial speed when the spec names none.
const DefaultBaud = 115200

// ParseSpec parses serial:/dev/ttyACM0?baud=115200, telnet:HOST:PORT
// (port 23 by default), labgrid:PLACE[@HOST[:PORT]] (a board reserved
// through a labgrid coordinator, LG_COORDINATOR's by default) or
// cmd:COMMAND.
func ParseSpec(spec string) (Spec, error) {
	kind, rest, ok := strings.Cut(spec, ":")
	if !ok || rest == "" {
		return Spec{}, fmt.Errorf("invalid --dut %q: want serial:DEVICE[?baud=N], telnet:HOST:PORT, labgrid:PLACE[@HOST:PORT] or cmd:COMMAND", spec)
	}
	switch kind {
	case "serial":
		path, query, _ := strings.Cut(rest, "?")
		sp := Spec{Kind: kind, Target: path, Baud: DefaultBaud}
		q, err := url.ParseQuery(query)
		if err != nil {
			return Spec{}, fmt.Errorf("invalid --dut %q: %v", spec, err)
		}
		for k := range q {
			if k != "baud" {
				return Spec{}, fmt.Errorf("invalid --dut %q: unknown option %q (only baud)", spec, k)
			}
		}
		if b := q.Get("baud"); b != "" {
			n, err := strconv.Atoi(b)
			if err != nil || n <= 0 {
				return Spec{}, fmt.Errorf("invalid --dut %q: baud %q is not a positive number", spec, b)
			}
			sp.Baud = n
		}
		if path == "" {
			return Spec{}, fmt.Errorf("invalid --dut %q: no serial device", spec)
		}
		return sp, nil
	case "telnet":
		hostport := rest
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			hostport = net.JoinHostPort(strings.Trim(rest, "[]"), "23")
		}
		host, port, err := net.SplitHostPort(hostport)
		if p, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || p < 1 || p > 65535 {
			return Spec{}, fmt.Errorf("invalid --dut %q: want telnet:HOST:PORT", spec)
		}
		return Spec{Kind: kind, Target: hostport}, nil
	case "labgrid":
		t, err := labgrid.ParseTarget(rest)
		if err != nil {
			return Spec{}, fmt.Errorf("invalid --dut %q: %v", spec, err)
		}
		return Spec{Kind: kind, Target: t.Place + "@" + t.Coordinator}, nil
	case "cmd":
		if strings.TrimSpace(rest) == "" {
			return Spec{}, fmt.Errorf("invalid --dut %q: empty command", spec)
		}
		return Spec{Kind: kind, Target: rest}, nil
	}
	return Spec{}, fmt.Errorf("invalid --dut %q: unknown kind %q (serial, telnet, labgrid or cmd)", spec, kind)
}

// Host returns the device's network address when the spec tells it
// (telnet), else "".
func (sp Spec) Host() string {
	if sp.Kind != "telnet" {
		return ""
	}
	h, _, _ := net.SplitHostPort(sp.Target)
	return h
}

// open connects to the shell; step bounds each wait of a labgrid
// reservation.
func (sp Spec) open(ctx context.Context, step time.Duration) (io.ReadWriteCloser, error) {
	switch sp.Kind {
	case "labgrid":
		t, err := labgrid.ParseTarget(sp.Target)
		if err != nil {
			return nil, err
		}
		b, err := labgrid.Open(ctx, t, step)
		if err != nil {
			return nil, err
		}
		return b, nil
	case "serial":
		p, err := serial.Open(sp.Target, &serial.Mode{BaudRate: sp.Baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
		if err != nil {
			return nil, fmt.Errorf("open serial port %s at %d baud: %w", sp.Target, sp.Baud, err)
		}
		return p, nil
	case "telnet":
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", sp.Target)
		if err != nil {
			return nil, fmt.Errorf("telnet to %s: %w", sp.Target, err)
		}
		return newTelnet(c), nil
	default:
		return startCmd(sp.Target)
	}
}

// cmdLine is a program whose stdin and stdout (with stderr) are the shell.
type cmdLine struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *os.File
	once sync.Once
}

func startCmd(line string) (*cmdLine, error) {
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.Command("cmd", "/C", line)
	} else {
		cmd = exec.Command("sh", "-c", line)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cmd %q: %w", line, err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	in, err := cmd.StdinPipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("cmd %q: %w", line, err)
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start %q: %w", line, err)
	}
	w.Close() // the child holds its copy; EOF comes when it exits
	return &cmdLine{cmd: cmd, in: in, out: r}, nil
}

func (c *cmdLine) Read(p []byte) (int, error)  { return c.out.Read(p) }
func (c *cmdLine) Write(p []byte) (int, error) { return c.in.Write(p) }

// Close ends the program: stdin closed, then killed, then reaped.
func (c *cmdLine) Close() error {
	c.once.Do(func() {
		_ = c.in.Close()
		if c.cmd.Process != nil {
			_ = c.cmd.Process.Kill()
		}
		_ = c.cmd.Wait()
		_ = c.out.Close()
	})
	return nil
}

// Telnet bytes (RFC 854, 857, 858).
const (
	tIAC    = 255
	tDONT   = 254
	tDO     = 253
	tWONT   = 252
	tWILL   = 251
	tSB     = 250
	tSE     = 240
	optEcho = 1
	optSGA  = 3
)

// telnet is a minimal telnet client: it lets the server echo and suppress
// go-ahead, refuses every other option, and strips the negotiation from
// what it reads.
type telnet struct {
	c     net.Conn
	state int // 0 data, 1 after IAC, 2 after a verb, 3 in SB, 4 IAC in SB
	verb  byte
	wmu   sync.Mutex
}

func newTelnet(c net.Conn) *telnet { return &telnet{c: c} }

func (t *telnet) Read(p []byte) (int, error) {
	for {
		n, err := t.c.Read(p)
		out := 0
		var reply []byte
		for _, b := range p[:n] {
			switch t.state {
			case 0:
				if b == tIAC {
					t.state = 1
				} else {
					p[out] = b
					out++
				}
			case 1:
				switch b {
				case tIAC:
					p[out] = b
					out++
					t.state = 0
				case tDO, tDONT, tWILL, tWONT:
					t.verb, t.state = b, 2
				case tSB:
					t.state = 3
				default:
					t.state = 0
				}
			case 2:
				reply = append(reply, answer(t.verb, b)...)
				t.state = 0
			case 3:
				if b == tIAC {
					t.state = 4
				}
			case 4:
				if b == tSE {
					t.state = 0
				} else {
					t.state = 3
				}
			}
		}
		if len(reply) > 0 {
			if _, werr := t.write(reply); werr != nil && err == nil {
				err = werr
			}
		}
		if out > 0 || err != nil {
			return out, err
		}
	}
}

// answer is our reply to a negotiation verb about opt (nil: none needed).
func answer(verb, opt byte) []byte {
	switch verb {
	case tWILL:
		if opt == optEcho || opt == optSGA {
			return []byte{tIAC, tDO, opt}
		}
		return []byte{tIAC, tDONT, opt}
	case tDO:
		return []byte{tIAC, tWONT, opt}
	}
	return nil // WONT / DONT need no answer
}

// Write sends p, doubling any 0xFF byte as telnet requires.
func (t *telnet) Write(p []byte) (int, error) {
	if strings.IndexByte(string(p), tIAC) >= 0 {
		q := make([]byte, 0, len(p)+4)
		for _, b := range p {
			if b == tIAC {
				q = append(q, tIAC)
			}
			q = append(q, b)
		}
		if _, err := t.write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return t.write(p)
}

func (t *telnet) write(p []byte) (int, error) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.c.Write(p)
}

func (t *telnet) Close() error { return t.c.Close() }

// RouteSource returns the local address the system would send from to
// reach host: the default --dut-peer. No packet is sent.
func RouteSource(host string) (string, error) {
	if host == "" {
		return "", errors.New("no host to route to")
	}
	c, err := net.Dial("udp", net.JoinHostPort(host, "9"))
	if err != nil {
		return "", fmt.Errorf("find the source address towards %s: %w", host, err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}
