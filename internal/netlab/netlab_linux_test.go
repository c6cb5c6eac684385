//go:build linux

package netlab

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// requireLab skips the test unless labs can be created here.
func requireLab(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("netlab: needs root to create network namespaces")
	}
	if err := Available(); err != nil {
		t.Skipf("netlab: namespaces unavailable: %v", err)
	}
}

// newLab creates a lab and registers its Close with t.
func newLab(t *testing.T, cfg Config) *Lab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

// ourNamespaces lists the namespaces in nsDir made by this process with
// the given label.
func ourNamespaces(t *testing.T, label string) []string {
	t.Helper()
	entries, err := os.ReadDir(nsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read %s: %v", nsDir, err)
	}
	var out []string
	for _, e := range entries {
		pid, _, ok := parseNSName(e.Name())
		if ok && pid == os.Getpid() && strings.Contains(e.Name(), "-"+label+"-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestParseStatStart(t *testing.T) {
	tests := []struct {
		name, stat string
		want       uint64
		wantErr    bool
	}{
		{"plain", "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 42 1000 100", 42, false},
		{"comm with spaces and parens", "7 (a b) c)) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 987654 1 1", 987654, false},
		{"no paren", "1 init S", 0, true},
		{"short", "1 (x) S 0 1", 0, true},
		{"not a number", "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 abc 1 1", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatStart(tt.stat)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseStatStart = %d, %v; want %d, err=%v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzParseStatStart(f *testing.F) {
	f.Add("1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 42 1000 100")
	f.Add("7 (a b) c)) R")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseStatStart(s) // must not panic
	})
}

func TestCreateCloseLeavesNothing(t *testing.T) {
	requireLab(t)
	const label = "createclose"
	for _, cfg := range []Config{
		{Name: label},
		{Name: label, RateBPS: 10e6, ShapeBothWays: true, IPv6: true, MTU: 9000},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l, err := New(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		if got := ourNamespaces(t, label); len(got) != 2 {
			t.Fatalf("after New: namespaces %v, want 2", got)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if got := ourNamespaces(t, label); len(got) != 0 {
			t.Fatalf("after Close: namespaces %v left behind", got)
		}
		out, err := exec.Command("ip", "netns", "list").CombinedOutput()
		if err != nil {
			t.Fatalf("ip netns list: %v: %s", err, out)
		}
		if bytes.Contains(out, []byte(l.A.Name)) || bytes.Contains(out, []byte(l.B.Name)) {
			t.Fatalf("ip netns list still shows the lab:\n%s", out)
		}
	}
}

func TestFailureMidwayCleansUp(t *testing.T) {
	requireLab(t)
	const label = "midway"
	errInjected := errors.New("injected failure")
	steps := []string{"namespace a", "namespace b", "loopback", "veth", "addresses", "no dad", "link up", "shaping", "carrier"}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			var seen []string
			cfg := Config{Name: label, RateBPS: 10e6, IPv6: true, hook: func(s string) error {
				seen = append(seen, s)
				if s == step {
					return errInjected
				}
				return nil
			}}
			l, err := New(context.Background(), cfg)
			if !errors.Is(err, errInjected) {
				if l != nil {
					l.Close()
				}
				t.Fatalf("New = %v, want the injected failure", err)
			}
			if seen[len(seen)-1] != step {
				t.Fatalf("steps run %v, want to stop at %q", seen, step)
			}
			if got := ourNamespaces(t, label); len(got) != 0 {
				t.Fatalf("namespaces %v left behind after failure at %q", got, step)
			}
		})
	}
}

func TestCancelledContext(t *testing.T) {
	requireLab(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(ctx, Config{Name: "cancelled"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("New with cancelled ctx = %v, want context.Canceled", err)
	}
	if got := ourNamespaces(t, "cancelled"); len(got) != 0 {
		t.Fatalf("namespaces %v left behind", got)
	}
}

// makeNS creates a bare named namespace, as a crashed run would leave it.
func makeNS(t *testing.T, name string) {
	t.Helper()
	h := &Host{Name: name}
	if err := h.createNS(); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	h.sys.nl.Close()
	h.sys.ns.Close()
	t.Cleanup(func() { _ = deleteNS(name) })
}

func TestCleanupStale(t *testing.T) {
	requireLab(t)
	// A PID that is certainly dead: a child that has exited and been reaped.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run true: %v", err)
	}
	deadPID := cmd.Process.Pid
	self := os.Getpid()
	selfStart, err := procStartTime(self)
	if err != nil {
		t.Fatal(err)
	}
	dead := nsName(deadPID, 1, "dead00", "stale", "a")
	reused := nsName(self, selfStart+1, "reuse0", "stale", "a") // our PID, another start: PID reuse
	live := nsName(self, selfStart, "live00", "stale", "a")
	other := "wbx-not-ours"
	for _, n := range []string{dead, reused, live, other} {
		makeNS(t, n)
	}

	removed, err := CleanupStale()
	if err != nil {
		t.Fatalf("CleanupStale: %v", err)
	}
	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, n := range []string{dead, reused} {
		if !has(removed, n) {
			t.Errorf("stale %s not in removed %v", n, removed)
		}
		if _, err := os.Stat(nsDir + "/" + n); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s still present (stat: %v)", n, err)
		}
	}
	for _, n := range []string{live, other} {
		if has(removed, n) {
			t.Errorf("%s removed, but it is not stale", n)
		}
		if _, err := os.Stat(nsDir + "/" + n); err != nil {
			t.Errorf("%s gone: %v", n, err)
		}
	}
}

func TestLabSetup(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "setup", RateBPS: 100e6, IPv6: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	out, err := l.A.Command(ctx, "ip", "-o", "addr", "show").CombinedOutput()
	if err != nil {
		t.Fatalf("ip addr in A: %v: %s", err, out)
	}
	for _, want := range []string{"lo ", "inet 127.0.0.1/8", "wbl-a", "inet 198.18.0.1/24", "inet6 2001:2::1/64"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("A's addresses lack %q:\n%s", want, out)
		}
	}
	out, err = l.A.Command(ctx, "ip", "route", "show", "default").CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("A has a default route or ip failed (%v): %q", err, out)
	}

	out, err = exec.CommandContext(ctx, "tc", "-d", "-n", l.A.Name, "qdisc", "show", "dev", l.A.Ifname).CombinedOutput()
	if err != nil {
		t.Fatalf("tc qdisc show: %v: %s", err, out)
	}
	for _, want := range []string{"tbf", "rate 100Mbit", "lat 20ms", "linklayer ethernet overhead 24"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("A's qdisc lacks %q:\n%s", want, out)
		}
	}
	out, err = exec.CommandContext(ctx, "tc", "-n", l.B.Name, "qdisc", "show", "dev", l.B.Ifname).CombinedOutput()
	if err != nil || strings.Contains(string(out), "tbf") {
		t.Errorf("B's egress should be unshaped (%v):\n%s", err, out)
	}

	for _, h := range []*Host{l.A, l.B} {
		link, err := h.sys.nl.LinkByName(h.Ifname)
		if err != nil {
			t.Fatal(err)
		}
		want := uint32(65535)
		if h.Shaped {
			want = 1
		}
		if got := link.Attrs().GSOMaxSegs; got != want {
			t.Errorf("%s gso_max_segs = %d, want %d", h.Name, got, want)
		}
		if got := link.Attrs().MTU; got != DefaultMTU {
			t.Errorf("%s mtu = %d, want %d", h.Name, got, DefaultMTU)
		}
	}
	if !l.A.Shaped || l.B.Shaped {
		t.Errorf("Shaped: A %v B %v, want true false", l.A.Shaped, l.B.Shaped)
	}
}

func TestConnectivity(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "conn", IPv6: true})
	tests := []struct {
		name    string
		network string
		addr    netip.Addr
	}{
		{"udp4", "udp", l.B.Addr},
		{"tcp4", "tcp", l.B.Addr},
		{"udp6", "udp", l.B.Addr6},
		{"tcp6", "tcp", l.B.Addr6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			if tt.network == "udp" {
				got = udpEcho(t, l, tt.addr)
			} else {
				got = tcpEcho(t, l, tt.addr)
			}
			if string(got) != "hello from A" {
				t.Fatalf("echo = %q", got)
			}
		})
	}
}

// udpEcho sends one datagram from A to addr (B) and returns B's echo.
func udpEcho(t *testing.T, l *Lab, addr netip.Addr) []byte {
	t.Helper()
	var srv *net.UDPConn
	if err := l.B.Do(func() (err error) {
		srv, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
		return err
	}); err != nil {
		t.Fatalf("listen in B: %v", err)
	}
	defer srv.Close()
	srv.SetDeadline(time.Now().Add(5 * time.Second))
	go func() {
		buf := make([]byte, 100)
		n, from, err := srv.ReadFromUDPAddrPort(buf)
		if err == nil {
			srv.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	var c *net.UDPConn
	if err := l.A.Do(func() (err error) {
		c, err = net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
		return err
	}); err != nil {
		t.Fatalf("dial from A: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("hello from A")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("read echo: %v", err)
	}
	return buf[:n]
}

// tcpEcho connects from A to addr (B), sends a line, returns B's echo.
func tcpEcho(t *testing.T, l *Lab, addr netip.Addr) []byte {
	t.Helper()
	var ln net.Listener
	if err := l.B.Do(func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(addr.String(), "0"))
		return err
	}); err != nil {
		t.Fatalf("listen in B: %v", err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 100)
		n, _ := c.Read(buf)
		c.Write(buf[:n])
	}()
	var c net.Conn
	if err := l.A.Do(func() (err error) {
		d := net.Dialer{Timeout: 5 * time.Second}
		c, err = d.Dial("tcp", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatalf("dial from A: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("hello from A")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("read echo: %v", err)
	}
	return buf[:n]
}

func TestDoStaysOutOfRootNamespace(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "isolation"})
	// Inside A there is no route to anything but 198.18.0.0/24 (and lo):
	// 198.19.0.1, inside the benchmarking range but off-link, must be
	// unreachable. This proves Do runs fn in A, not in the root namespace.
	err := l.A.Do(func() error {
		c, err := net.Dial("udp", "198.19.0.1:9")
		if err == nil {
			c.Close()
		}
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("dial off-link from A = %v, want network unreachable", err)
	}
	// And Do propagates fn's error and panics.
	sentinel := errors.New("x")
	if err := l.A.Do(func() error { return sentinel }); !errors.Is(err, sentinel) {
		t.Fatalf("Do error = %v, want sentinel", err)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want boom", r)
			}
		}()
		_ = l.A.Do(func() error { panic("boom") })
	}()
}

func TestCommandRunsInNamespace(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "command"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := l.B.Command(ctx, "ping", "-c", "1", "-W", "2", l.A.Addr.String()).CombinedOutput()
	if errors.Is(err, exec.ErrNotFound) || (err != nil && strings.Contains(string(out), "No such file")) {
		t.Skip("ping not installed")
	}
	if err != nil {
		t.Fatalf("ping A from B: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "1 received") {
		t.Fatalf("ping output:\n%s", out)
	}
}
