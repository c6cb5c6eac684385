//go:build linux || darwin

package dut

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/zshell"
	"github.com/wirebench/wirebench/internal/units"
)

// openZShell starts the stand-in Zephyr shell on a pty and opens a
// session on it with auto detection.
func openZShell(t *testing.T, ctx context.Context, o zshell.Options) (*zshell.Shell, *Session) {
	t.Helper()
	return openZShellAs(t, ctx, o, "auto")
}

// openZShellAs is openZShell with the shell named (--dut-shell).
func openZShellAs(t *testing.T, ctx context.Context, o zshell.Options, shell string) (*zshell.Shell, *Session) {
	t.Helper()
	sh, spec, closeSh, err := zshell.StartPTY(ctx, o)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	t.Cleanup(closeSh)
	s, err := Open(ctx, spec, Options{Shell: shell, StepTimeout: 5 * time.Second, ReportTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("%v\n%s", err, transcriptOf(s))
	}
	t.Cleanup(func() { s.Close() })
	return sh, s
}

// runZCell runs one test through s: the device as server (our client) or
// as client (our one-test server).
func runZCell(t *testing.T, ctx context.Context, s *Session, proto string, role Role) (*result.Result, error) {
	t.Helper()
	test := Test{Proto: proto, Peer: "127.0.0.1", Duration: time.Second, RateBPS: 2e6, Length: 1000}
	if role == RoleServer {
		test.Port = freePort(t)
		cfg := session.ClientConfig{Host: "127.0.0.1", Port: test.Port, UDP: proto == "udp", Duration: time.Second, Dialect: s.Dialect()}
		if cfg.UDP {
			cfg.Rate, cfg.Length = units.Rate{Value: 2e6}, 1000
		}
		return s.RunDeviceServer(ctx, test, func(ctx context.Context) (*result.Result, error) { return dialect.RunClient(ctx, cfg) })
	}
	port, run, err := s.ListenOne(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	test.Port = port
	return s.RunDeviceClient(ctx, test, run)
}

// TestZephyrSyntaxes drives the stand-in Zephyr shell of each zperf syntax
// in use (2.x sample, 3.4, current) over a pty, with its colours, prompt
// redraws, log lines and IPv6 note, through TCP and UDP in both
// directions: the version is detected, every figure parsed equals what the
// stand-in behind the shell counted (2.x's 1024-based rates converted),
// and UDP uploads get real statistics from our server.
func TestZephyrSyntaxes(t *testing.T) {
	for _, v := range []struct{ version, syntax, dialect string }{
		{"2.7.6", "2.7", session.DialectIperf2Legacy},
		{"3.4.0", "3.x", session.DialectIperf2Legacy},
		{"4.3.0", "current", ""},
	} {
		t.Run(v.version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			sh, s := openZShell(t, ctx, zshell.Options{Version: v.version})
			if want := "Zephyr " + v.version + " (zperf " + v.syntax + " syntax)"; s.Firmware() != want || s.Dialect() != v.dialect {
				t.Fatalf("firmware %q, dialect %q; want %q, %q", s.Firmware(), s.Dialect(), want, v.dialect)
			}
			for _, c := range []struct {
				proto string
				role  Role
			}{{"tcp", RoleServer}, {"udp", RoleServer}, {"tcp", RoleClient}, {"udp", RoleClient}} {
				r, err := runZCell(t, ctx, s, c.proto, c.role)
				if err != nil {
					t.Fatalf("%s device-%s: %v\n%s", c.proto, c.role, err, transcriptOf(s))
				}
				var got zshell.Counted
				select {
				case got = <-sh.Counted:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s device-%s: the stand-in counted nothing", c.proto, c.role)
				}
				d := r.Device
				kilo := 1000.0
				if v.syntax == "2.7" {
					kilo = 1024
				}
				// The rate as the shell computed and truncated it.
				printed := math.Floor(float64(got.Bytes)*8/got.Duration.Seconds()/kilo) * kilo
				if d == nil || d.Error != "" || d.BitsPerSecond == nil || math.Abs(*d.BitsPerSecond-printed) > 0.011*printed {
					t.Fatalf("%s device-%s: device %+v; the stand-in: %+v (printed ≈ %.0f bit/s)\n%s", c.proto, c.role, d, got, printed, transcriptOf(s))
				}
				if got.Packets > 0 && (d.Packets == nil || *d.Packets != got.Packets) {
					t.Errorf("%s device-%s: packets %v, the stand-in's %d", c.proto, c.role, d.Packets, got.Packets)
				}
				if c.proto == "udp" && (d.Lost == nil || *d.Lost != got.Lost || d.JitterMS == nil) {
					t.Errorf("%s device-%s: lost %v jitter %v, the stand-in's %d, %d µs", c.proto, c.role, d.Lost, d.JitterMS, got.Lost, got.JitterUS)
				}
				if c.proto == "udp" && c.role == RoleClient && (got.Packets == 0 || strings.Contains(d.Raw, "LAST PACKET")) {
					t.Errorf("zperf got no statistics from our server: %q", d.Raw)
				}
				// Our client read zperf's report: its receiver figures are
				// the zperf server's (within the FIN: a 4.2+ report's
				// "datagrams" is the FIN's id, the highest sequence, where
				// the shell prints what was received; which of the two our
				// receiver shows is the count-semantics issue's, not this).
				if c.proto == "udp" && c.role == RoleServer && (r.Receiver == nil || r.Receiver.Source != "peer-report" || r.Receiver.Packets-got.Packets < 0 || r.Receiver.Packets-got.Packets > 1) {
					t.Errorf("our client did not read zperf's report: receiver %+v, zperf counted %d", r.Receiver, got.Packets)
				}
				t.Logf("%s device-%s: device %s; ours %s", c.proto, c.role, describe(d), ours(r))
			}
			if testing.Verbose() {
				t.Logf("transcript:\n%s", transcriptOf(s))
			}
		})
	}
}

// TestZephyrIperf3 drives the stand-in of a zperf built for iperf3
// (--dut-shell zephyr-iperf3) over a pty through TCP and UDP in both
// directions: our client speaks iperf3 to the device's server, our server
// answers the device's iperf3 client on its one port, and every figure
// parsed from the shell's reports equals what the iperf3 engine behind
// the stand-in counted.
func TestZephyrIperf3(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sh, s := openZShellAs(t, ctx, zshell.Options{Version: "4.3.0", Iperf3: true}, ZephyrIperf3Shell)
	if want := "Zephyr 4.3.0 (zperf iperf3 mode, named by --dut-shell zephyr-iperf3)"; s.Firmware() != want || s.Dialect() != session.DialectIperf3 || s.Shell() != "zephyr" {
		t.Fatalf("firmware %q, dialect %q, shell %q; want %q, iperf3, zephyr", s.Firmware(), s.Dialect(), s.Shell(), want)
	}
	for _, c := range []struct {
		proto string
		role  Role
	}{{"tcp", RoleServer}, {"udp", RoleServer}, {"tcp", RoleClient}, {"udp", RoleClient}} {
		r, err := runZCell(t, ctx, s, c.proto, c.role)
		if err != nil {
			t.Fatalf("%s device-%s: %v\n%s", c.proto, c.role, err, transcriptOf(s))
		}
		var got zshell.Counted
		select {
		case got = <-sh.Counted:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s device-%s: the stand-in counted nothing\n%s", c.proto, c.role, transcriptOf(s))
		}
		d := r.Device
		printed := math.Floor(float64(got.Bytes)*8/got.Duration.Seconds()/1000) * 1000
		if d == nil || d.Error != "" || d.BitsPerSecond == nil || math.Abs(*d.BitsPerSecond-printed) > 0.011*printed {
			t.Fatalf("%s device-%s: device %+v; the stand-in: %+v (printed ≈ %.0f bit/s)\n%s", c.proto, c.role, d, got, printed, transcriptOf(s))
		}
		if r.Test.Dialect != session.DialectIperf3 {
			t.Errorf("%s device-%s: our side ran the %q dialect, want iperf3", c.proto, c.role, r.Test.Dialect)
		}
		if got.Packets > 0 && (d.Packets == nil || *d.Packets != got.Packets) {
			t.Errorf("%s device-%s: packets %v, the stand-in's %d", c.proto, c.role, d.Packets, got.Packets)
		}
		if c.proto == "udp" && (d.Lost == nil || *d.Lost != got.Lost || d.JitterMS == nil) {
			t.Errorf("%s device-%s: lost %v jitter %v, the stand-in's %d, %d µs", c.proto, c.role, d.Lost, d.JitterMS, got.Lost, got.JitterUS)
		}
		if c.proto == "udp" && c.role == RoleClient && d.OutOfOrder != nil {
			t.Errorf("udp device-client: out-of-order %d, but an iperf3 client's report has no such count", *d.OutOfOrder)
		}
		t.Logf("%s device-%s: device %s; ours %s", c.proto, c.role, describe(d), ours(r))
	}
	if testing.Verbose() {
		t.Logf("transcript:\n%s", transcriptOf(s))
	}
}

// A shell without zperf: the step ends as soon as the shell says so,
// quoting it, in both roles, and our side does not run for nothing.
func TestZephyrCommandNotFound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, s := openZShell(t, ctx, zshell.Options{Version: "3.4.0", NoZperf: true})
	for _, c := range []struct {
		proto string
		role  Role
	}{{"udp", RoleServer}, {"udp", RoleClient}, {"tcp", RoleClient}} {
		start := time.Now()
		_, err := runZCell(t, ctx, s, c.proto, c.role)
		el := time.Since(start)
		var de *DeviceError
		if !errors.As(err, &de) || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), `"zperf: command not found"`) {
			t.Fatalf("%s device-%s: %v; want the device's line quoted\n%s", c.proto, c.role, err, transcriptOf(s))
		}
		if strings.Contains(err.Error(), "context") {
			t.Errorf("Go internals in %q", err)
		}
		// The product answers within a second; the bound is the step
		// timeout, which a loaded machine cannot reach by accident.
		if el > s.o.StepTimeout {
			t.Errorf("%s device-%s: took %v, the step timeout is %v", c.proto, c.role, el, s.o.StepTimeout)
		}
		t.Logf("%s device-%s: failed after %v: %v", c.proto, c.role, el.Round(time.Millisecond), err)
	}
}

// A server left over (a session that never stopped it, or a 2.x board
// that cannot): a 3.x shell is told to stop it and start again; a 2.x
// shell's "already started" is taken as serving on the port asked for.
// Both run the test.
func TestZephyrServerLeftOver(t *testing.T) {
	for _, version := range []string{"2.7.6", "3.4.0"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			sh, spec, closeSh, err := zshell.StartPTY(ctx, zshell.Options{Version: version})
			if err != nil {
				t.Skipf("no pty: %v", err)
			}
			defer closeSh()
			port := freePort(t)
			o := Options{Shell: "zephyr", StepTimeout: 5 * time.Second, ReportTimeout: 10 * time.Second}
			first, err := Open(ctx, spec, o)
			if err != nil {
				t.Fatal(err)
			}
			// A first session starts the server and goes away.
			if err := first.StartServer(ctx, Test{Proto: "udp", Port: port}); err != nil {
				t.Fatalf("%v\n%s", err, transcriptOf(first))
			}
			first.c.close() // the line drops; the shell keeps its server
			s, err := Open(ctx, spec, o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			test := Test{Proto: "udp", Port: port, Duration: time.Second}
			cfg := session.ClientConfig{Host: "127.0.0.1", Port: port, UDP: true, Duration: time.Second, Dialect: s.Dialect(),
				Rate: units.Rate{Value: 2e6}, Length: 1000}
			r, err := s.RunDeviceServer(ctx, test, func(ctx context.Context) (*result.Result, error) { return dialect.RunClient(ctx, cfg) })
			tr := transcriptOf(s)
			if err != nil || r.Device == nil || r.Device.Packets == nil {
				t.Fatalf("%v\n%s", err, tr)
			}
			if !strings.Contains(tr, "UDP server already started!") {
				t.Errorf("the shell never said its server was running:\n%s", tr)
			}
			if got := <-sh.Counted; *r.Device.Packets != got.Packets {
				t.Errorf("device packets %d, the stand-in's %d", *r.Device.Packets, got.Packets)
			}
		})
	}
}

// An upload started with zperf's -a returns to the prompt at once and
// prints its report from the upload's thread, every shell_fprintf between
// prompt redraws: the session still reads the report whole. (wirebench
// types no -a; a board's own scripts may.)
func TestZephyrAsyncUpload(t *testing.T) {
	for _, version := range []string{"3.4.0", "4.3.0"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			sh, s := openZShell(t, ctx, zshell.Options{Version: version})
			a := *s.a
			commands := a.Commands
			a.Commands = func(role Role, t Test) ([]string, error) {
				cmds, err := commands(role, t)
				if role == RoleClient && err == nil {
					cmds[0] = strings.Replace(cmds[0], " upload ", " upload -a ", 1)
				}
				return cmds, err
			}
			s.a = &a
			for _, proto := range []string{"udp", "tcp"} {
				r, err := runZCell(t, ctx, s, proto, RoleClient)
				if err != nil {
					t.Fatalf("%s: %v\n%s", proto, err, transcriptOf(s))
				}
				got := <-sh.Counted
				d := r.Device
				if d == nil || d.Packets == nil || *d.Packets != got.Packets || d.BitsPerSecond == nil || d.Seconds == nil {
					t.Fatalf("%s: device %+v, the stand-in's %+v\n%s", proto, d, got, transcriptOf(s))
				}
				redrawn := false
				for _, l := range s.TranscriptLines() {
					redrawn = redrawn || strings.Contains(l, "^[[8D^[[JNum packets:")
				}
				if !redrawn {
					t.Errorf("%s: the report did not come around prompt redraws:\n%s", proto, transcriptOf(s))
				}
			}
		})
	}
}
