package labgrid_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/labgrid"
	"github.com/wirebench/wirebench/internal/testutil/lgfake"
)

// echoLine answers each line with "got LINE".
func echoLine(ctx context.Context, rw io.ReadWriter) {
	go func() {
		sc := bufio.NewScanner(rw)
		for sc.Scan() {
			if _, err := io.WriteString(rw, "got "+sc.Text()+"\n"); err != nil {
				return
			}
		}
	}()
}

func startPlace(t *testing.T, ctx context.Context, raw bool) (*lgfake.Coordinator, *lgfake.Console) {
	t.Helper()
	t.Setenv("LG_HOSTNAME", "bench")
	t.Setenv("LG_USERNAME", "tester")
	con, err := lgfake.ServeConsole(ctx, raw, echoLine)
	if err != nil {
		t.Fatal(err)
	}
	co, err := lgfake.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(co.Stop)
	proto := "rfc2217"
	if raw {
		proto = "raw"
	}
	co.AddPlace("board", "127.0.0.1", con.Port, proto, 921600)
	return co, con
}

// TestOpenTalkRelease: the place is acquired under LG_HOSTNAME/LG_USERNAME,
// its console reached over RFC 2217 (at the resource's speed) or raw TCP,
// bytes go both ways (0xFF too), and Close releases the place.
func TestOpenTalkRelease(t *testing.T) {
	for _, raw := range []bool{false, true} {
		name := "rfc2217"
		if raw {
			name = "raw"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			co, con := startPlace(t, ctx, raw)
			b, err := labgrid.Open(ctx, labgrid.Target{Place: "board", Coordinator: co.Addr}, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if h := co.Holder("board"); h != "bench/tester" || b.Mine {
				t.Errorf("holder %q, mine %v; want bench/tester, acquired by us", h, b.Mine)
			}
			if b.Port.Path != "exporter/board/NetworkSerialPort/console" || b.Port.Speed != 921600 {
				t.Errorf("serial port %+v", b.Port)
			}
			if _, err := io.WriteString(b, "hi \xff\n"); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(b).ReadString('\n')
			if err != nil || line != "got hi \xff\n" {
				t.Errorf("read %q, %v", line, err)
			}
			if !raw && con.Baud() != 921600 {
				t.Errorf("console set to %d baud, want 921600", con.Baud())
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if h := co.Holder("board"); h != "" {
				t.Errorf("held by %q after Close", h)
			}
		})
	}
}

// A place someone else holds is refused naming them, and stays theirs.
func TestHeldByOther(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	co, _ := startPlace(t, ctx, false)
	co.Hold("board", "lab-pc/alice")
	_, err := labgrid.Open(ctx, labgrid.Target{Place: "board", Coordinator: co.Addr}, 30*time.Second)
	var held *labgrid.HeldError
	if !errors.As(err, &held) || held.Holder != "lab-pc/alice" || !strings.Contains(err.Error(), "acquired by lab-pc/alice") {
		t.Fatalf("err %v; want a HeldError naming lab-pc/alice", err)
	}
	if h := co.Holder("board"); h != "lab-pc/alice" {
		t.Errorf("holder %q after the refusal", h)
	}
}

// A place this user acquired beforehand (labgrid-client acquire) is used
// and left acquired.
func TestAlreadyMine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	co, _ := startPlace(t, ctx, false)
	co.Hold("board", "bench/tester")
	b, err := labgrid.Open(ctx, labgrid.Target{Place: "board", Coordinator: co.Addr}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Mine || co.Acquisitions("board") != 0 {
		t.Errorf("mine %v, %d acquisitions", b.Mine, co.Acquisitions("board"))
	}
	b.Close()
	if h := co.Holder("board"); h != "bench/tester" {
		t.Errorf("holder %q after Close; want it left to bench/tester", h)
	}
}

// No such place, and no coordinator: clear errors.
func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	co, _ := startPlace(t, ctx, false)
	_, err := labgrid.Open(ctx, labgrid.Target{Place: "nosuch", Coordinator: co.Addr}, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), `no labgrid place "nosuch"`) {
		t.Errorf("err %v", err)
	}
	co.Stop()
	_, err = labgrid.Open(ctx, labgrid.Target{Place: "board", Coordinator: co.Addr}, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "labgrid coordinator "+co.Addr) {
		t.Errorf("err %v", err)
	}
}

// A coordinator address that takes the connection but never answers
// (not gRPC, or hung): Open ends with the step's deadline, not gRPC's own
// much longer one.
func TestCoordinatorSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	_, err = labgrid.Open(context.Background(), labgrid.Target{Place: "board", Coordinator: ln.Addr().String()}, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "labgrid coordinator "+ln.Addr().String()) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v; want the step's deadline naming the coordinator", err)
	}
}

// A console that cannot be reached releases the place again.
func TestConsoleFailureReleases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t.Setenv("LG_HOSTNAME", "bench")
	t.Setenv("LG_USERNAME", "tester")
	co, err := lgfake.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer co.Stop()
	con, err := lgfake.ServeConsole(ctx, false, echoLine)
	if err != nil {
		t.Fatal(err)
	}
	con.Close() // nothing listens on its port now
	co.AddPlace("board", "127.0.0.1", con.Port, "", 115200)
	_, err = labgrid.Open(ctx, labgrid.Target{Place: "board", Coordinator: co.Addr}, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "console exporter/board/NetworkSerialPort/console") {
		t.Fatalf("err %v; want the console's failure", err)
	}
	if co.Acquisitions("board") != 1 || co.Holder("board") != "" {
		t.Errorf("%d acquisitions, holder %q; want acquired once and released", co.Acquisitions("board"), co.Holder("board"))
	}
}

// An exporter reachable only through an SSH proxy: a clear error, and the
// place released again.
func TestProxyRequired(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	co, con := startPlace(t, ctx, false)
	co.RequireProxy("board")
	_, err := labgrid.Open(ctx, labgrid.Target{Place: "board", Coordinator: co.Addr}, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "SSH proxy") {
		t.Fatalf("err %v; want one about the proxy", err)
	}
	if co.Holder("board") != "" || con.Conns() != 0 {
		t.Errorf("holder %q, %d console connections", co.Holder("board"), con.Conns())
	}
}

func TestParseTarget(t *testing.T) {
	t.Setenv("LG_COORDINATOR", "coord.lab:1234")
	for in, want := range map[string]string{
		"b":               "b@coord.lab:1234",
		"b@10.0.0.1":      "b@10.0.0.1:20408",
		"b@10.0.0.1:5":    "b@10.0.0.1:5",
		"b@[::1]:20409":   "b@[::1]:20409",
		"b@::1":           "b@[::1]:20408",
		"b@ws://x:20408/": "error",
		"@x":              "error",
		"b@x:99999":       "error",
	} {
		tg, err := labgrid.ParseTarget(in)
		got := tg.Place + "@" + tg.Coordinator
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("%q: %q (%v), want %q", in, got, err, want)
		}
	}
	t.Setenv("LG_COORDINATOR", "")
	if tg, _ := labgrid.ParseTarget("b"); tg.Coordinator != "127.0.0.1:20408" {
		t.Errorf("default coordinator %q", tg.Coordinator)
	}
}
