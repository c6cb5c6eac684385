//go:build linux || darwin

package dut

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/units"
)

// freePort is loopback.FreePort.
func freePort(t *testing.T) int { return loopback.FreePort(t) }

type cell struct {
	fw, proto string
	role      Role
	dialect   string // our client's dialect when the device is the server
}

// runCell drives one test through a fake board and returns our result,
// what the board's stand-in counted, and the session.
func runCell(t *testing.T, ctx context.Context, c cell, mode string, o Options) (*result.Result, *board, *Session, error) {
	t.Helper()
	b, spec := startBoard(t, ctx, c.fw, mode)
	if o.Shell == "" {
		o.Shell = "auto"
	}
	s, err := Open(ctx, spec, o)
	if err != nil {
		return nil, b, s, err
	}
	t.Cleanup(func() { s.Close() })
	if s.Shell() != c.fw {
		t.Fatalf("detected shell %q, want %q", s.Shell(), c.fw)
	}
	test := Test{Proto: c.proto, Peer: "127.0.0.1", Duration: time.Second, RateBPS: 2e6, Length: 1000}
	if c.role == RoleServer {
		test.Port = freePort(t)
		cfg := session.ClientConfig{Host: "127.0.0.1", Port: test.Port, UDP: c.proto == "udp", Duration: time.Second, Dialect: c.dialect}
		if cfg.UDP {
			cfg.Rate, cfg.Length = units.Rate{Value: 2e6}, 1000
		}
		r, err := s.RunDeviceServer(ctx, test, func(ctx context.Context) (*result.Result, error) { return dialect.RunClient(ctx, cfg) })
		return r, b, s, err
	}
	port, run, err := ListenOne(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	test.Port = port
	r, err := s.RunDeviceClient(ctx, test, run)
	return r, b, s, err
}

// TestFakeBoards runs TCP and UDP in both directions against a fake board
// per firmware, detected with auto, and checks that the device-side
// figures parsed from its shell equal what its stand-in peer counted, and
// that figures the firmware does not print are absent.
func TestFakeBoards(t *testing.T) {
	cells := []cell{
		{"zephyr", "udp", RoleServer, ""}, {"zephyr", "tcp", RoleServer, session.DialectRaw},
		{"zephyr", "udp", RoleClient, ""}, {"zephyr", "tcp", RoleClient, ""},
		{"esp-idf", "udp", RoleServer, session.DialectRaw}, {"esp-idf", "tcp", RoleServer, session.DialectRaw},
		{"esp-idf", "udp", RoleClient, ""}, {"esp-idf", "tcp", RoleClient, ""},
		{"harmony", "udp", RoleServer, session.DialectIperf2Legacy}, {"harmony", "tcp", RoleServer, session.DialectIperf2Legacy},
		{"harmony", "udp", RoleClient, ""}, {"harmony", "tcp", RoleClient, ""},
		{"lwip", "tcp", RoleServer, session.DialectIperf2Legacy}, {"lwip", "tcp", RoleClient, ""},
	}
	for _, c := range cells {
		t.Run(c.fw+"/"+c.proto+"/device-"+string(c.role), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			r, b, s, err := runCell(t, ctx, c, "", Options{StepTimeout: 3 * time.Second, ReportTimeout: 8 * time.Second})
			if err != nil {
				t.Fatalf("%v\ntranscript:\n%s", err, transcriptOf(s))
			}
			var got counted
			select {
			case got = <-b.got:
			case <-time.After(5 * time.Second):
				t.Fatal("the board's stand-in reported nothing")
			}
			d := r.Device
			if d == nil || d.Error != "" || d.Shell != c.fw || d.Role != string(c.role) {
				t.Fatalf("device = %+v", d)
			}
			if d.BitsPerSecond == nil || math.Abs(*d.BitsPerSecond-float64(got.printedKbps)*1e3) > 10e3 {
				t.Errorf("device rate %v, the stand-in's %d kbit/s", d.BitsPerSecond, got.printedKbps)
			}
			if got.printedKbps <= 0 {
				t.Errorf("no traffic reached the stand-in: %+v", got)
			}
			eq := func(name string, p *int64, want int64, has bool) {
				t.Helper()
				switch {
				case !has && p != nil:
					t.Errorf("%s = %d, want absent (the firmware does not print it)", name, *p)
				case has && (p == nil || *p != want):
					t.Errorf("%s = %v, want %d", name, p, want)
				}
			}
			eq("packets", d.Packets, got.packets, got.hasPackets)
			eq("lost", d.Lost, got.lost, got.hasLoss)
			eq("out_of_order", d.OutOfOrder, got.ooo, got.hasJitter)
			if got.hasJitter != (d.JitterMS != nil) || d.JitterMS != nil && math.Abs(*d.JitterMS-float64(got.jitterUS)/1e3) > 0.01 {
				t.Errorf("jitter %v, the stand-in's %d µs", d.JitterMS, got.jitterUS)
			}
			if r.Sender == nil && r.Receiver == nil {
				t.Errorf("no PC-side figures: %+v", r)
			}
			if len(d.Transcript) == 0 || d.Raw == "" {
				t.Errorf("transcript %d lines, raw %q", len(d.Transcript), d.Raw)
			}
			t.Logf("device: %s; ours: %s", describe(d), ours(r))
		})
	}
}

func describe(d *result.Device) string {
	var b strings.Builder
	if d.BitsPerSecond != nil {
		b.WriteString(units.FormatBits(*d.BitsPerSecond))
	}
	if d.Packets != nil {
		b.WriteString(" packets=" + itoa(*d.Packets))
	}
	if d.Lost != nil {
		b.WriteString(" lost=" + itoa(*d.Lost))
	}
	return b.String()
}

func ours(r *result.Result) string {
	if r.Receiver != nil {
		return units.FormatBits(r.Receiver.BitsPerSecond) + " (receiver, " + r.Receiver.Source + ")"
	}
	if r.Sender != nil {
		return units.FormatBits(r.Sender.BitsPerSecond) + " (sender)"
	}
	return "none"
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestDeviceFailures: a device that never answers, answers garbage, resets
// mid-test or drops its line gives a clear error within its timeout, and
// the PC-side result is kept.
func TestDeviceFailures(t *testing.T) {
	o := Options{StepTimeout: 1500 * time.Millisecond, ReportTimeout: 4 * time.Second}
	cases := []struct {
		mode string
		role Role
		want string
		is   error
	}{
		{"silent", RoleServer, "the device printed nothing", ErrTimeout},
		{"garbage", RoleServer, "no answer from the device", ErrTimeout},
		{"reset", RoleServer, "Booting Zephyr", ErrReset},
		{"drop", RoleServer, "line to the device closed", ErrLineClosed},
		{"reset", RoleClient, "Booting Zephyr", ErrReset},
	}
	for _, tc := range cases {
		t.Run(tc.mode+"/device-"+string(tc.role), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			start := time.Now()
			c := cell{"zephyr", "udp", tc.role, ""}
			r, _, s, err := runCell(t, ctx, c, tc.mode, o)
			if s == nil || r == nil && tc.mode == "silent" {
				// Open failed: run our side alone, as the CLI does.
				if err == nil {
					t.Fatal("Open succeeded on a silent device")
				}
				port := freePort(t)
				cfg := session.ClientConfig{Host: "127.0.0.1", Port: port, UDP: true, Duration: time.Second, Rate: units.Rate{Value: 2e6}}
				r, err = WithoutDevice(ctx, RoleServer, "zephyr", err, s, func(ctx context.Context) (*result.Result, error) { return dialect.RunClient(ctx, cfg) })
			}
			el := time.Since(start)
			var de *DeviceError
			if !errors.As(err, &de) || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a DeviceError wrapping %v saying %q\ntranscript:\n%s", err, tc.is, tc.want, transcriptOf(s))
			}
			// Bounds: the step timeout or the report timeout, plus the
			// 1 s test and our client's wait for a report (~2.5 s UDP).
			if limit := o.StepTimeout + o.ReportTimeout + 6*time.Second; el > limit {
				t.Errorf("took %v, more than %v", el, limit)
			}
			if r == nil || r.Device == nil || r.Device.Error == "" || r.Device.BitsPerSecond != nil {
				t.Fatalf("result %+v: want the PC-side result with the device error and no device figures", r)
			}
			if r.Sender == nil && r.Receiver == nil {
				t.Errorf("PC-side figures lost: %+v", r)
			}
			found := false
			for _, w := range r.Warnings {
				found = found || strings.Contains(w, "device-side figures missing")
			}
			if !found {
				t.Errorf("no warning about the device in %q", r.Warnings)
			}
			t.Logf("after %v: %v", el.Round(time.Millisecond), err)
		})
	}
}

// TestDeviceServerRefusedAtFirst: a device that says its server started
// before the server has bound its port refuses our first connections (an
// ESP-IDF board prints "mode=tcp-server" and then starts its task; a CI
// run caught the fake board doing the same). Our client is tried again
// while the device's server comes up, and the test runs.
func TestDeviceServerRefusedAtFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, test := openESP(t, ctx)
	cfg := session.ClientConfig{Host: "127.0.0.1", Port: test.Port, Duration: time.Second}
	calls := 0
	r, err := s.RunDeviceServer(ctx, test, func(ctx context.Context) (*result.Result, error) {
		calls++
		if calls <= 2 {
			return nil, fmt.Errorf("connecting to 127.0.0.1:%d: %w", test.Port, syscall.ECONNREFUSED)
		}
		return dialect.RunClient(ctx, cfg)
	})
	if err != nil {
		t.Fatalf("after %d tries: %v", calls, err)
	}
	if calls != 3 || r == nil || r.Error != "" || r.Sender == nil || r.Sender.Bytes == 0 {
		t.Fatalf("%d tries, result %+v; want the third try to run the test", calls, r)
	}
}

// openESP opens a session with a fake ESP-IDF board and a 1 s TCP test on
// a free port.
func openESP(t *testing.T, ctx context.Context) (*Session, Test) {
	t.Helper()
	_, spec := startBoard(t, ctx, "esp-idf", "")
	s, err := Open(ctx, spec, Options{Shell: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, Test{Proto: "tcp", Peer: "127.0.0.1", Duration: time.Second, Port: freePort(t)}
}

// TestDeviceServerRefusedForGood: a client still refused after the grace
// period returns the refusal, not a hang.
func TestDeviceServerRefusedForGood(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, test := openESP(t, ctx)
	calls := 0
	_, err := s.RunDeviceServer(ctx, test, func(ctx context.Context) (*result.Result, error) {
		calls++
		return nil, fmt.Errorf("connecting: %w", syscall.ECONNREFUSED)
	})
	if !errors.Is(err, syscall.ECONNREFUSED) || calls < 2 {
		t.Fatalf("%d tries, error %v; want the refusal after more than one try", calls, err)
	}
	t.Logf("refused for good after %d tries: %v", calls, err)
}
