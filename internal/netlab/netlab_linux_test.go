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
	"syscall"
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
	for _, tt := range []struct {
		cfg  Config
		want int // namespaces
	}{
		{Config{Name: label}, 2},
		{Config{Name: label, RateBPS: 10e6, ShapeBothWays: true, IPv6: true, MTU: 9000}, 2},
		{Config{Name: label, Router: true}, 3},
		{Config{Name: label, Router: true, RateBPS: 10e6, ShapeBothWays: true, IPv6: true, MTU: 9000}, 3},
	} {
		cfg := tt.cfg
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l, err := New(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		if got := ourNamespaces(t, label); len(got) != tt.want {
			t.Fatalf("after New: namespaces %v, want %d", got, tt.want)
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
		for _, h := range l.hosts() {
			if bytes.Contains(out, []byte(h.Name)) {
				t.Fatalf("ip netns list still shows %s:\n%s", h.Name, out)
			}
		}
	}
}

func TestFailureMidwayCleansUp(t *testing.T) {
	requireLab(t)
	const label = "midway"
	steps := []string{"namespace a", "namespace b", "namespace r", "loopback", "veth", "addresses", "no dad", "no router solicitations",
		"forwarding", "link up", "routes", "shaping", "carrier"}
	for _, tt := range []struct {
		name   string
		router bool
	}{{"two hosts", false}, {"router", true}} {
		for _, step := range steps {
			t.Run(tt.name+"/"+step, func(t *testing.T) { failAt(t, label, step, tt.router) })
		}
	}
}

// failAt creates a lab whose creation fails after step and checks that
// nothing is left behind.
func failAt(t *testing.T, label, step string, router bool) {
	t.Helper()
	errInjected := errors.New("injected failure")
	var seen []string
	cfg := Config{Name: label, RateBPS: 10e6, IPv6: true, Router: router, hook: func(s string) error {
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

	checkFilledQdisc(ctx, t, l.A, l.A.Ifname, "100Mbit")
	out, err = exec.CommandContext(ctx, "tc", "-n", l.B.Name, "qdisc", "show", "dev", l.B.Ifname).CombinedOutput()
	if err != nil || strings.Contains(string(out), "htb") || strings.Contains(string(out), "tbf") {
		t.Errorf("B's egress should be unshaped (%v):\n%s", err, out)
	}
	if fs := l.FillStats(); len(fs) != 1 || fs[0].NS != l.A.Name || fs[0].Ifname != l.A.Ifname {
		t.Errorf("filler links %v, want one on A's %s", fs, l.A.Ifname)
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
	c := dialFromA(t, l, srv)
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

func TestRouterSetup(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "rtrsetup", Router: true, RateBPS: 10e6, Latency: 50 * time.Millisecond, IPv6: true})
	if l.R == nil {
		t.Fatal("Lab.R is nil with Config.Router")
	}
	if got := ourNamespaces(t, "rtrsetup"); len(got) != 3 {
		t.Fatalf("namespaces %v, want 3", got)
	}
	wantAddrs := map[*Host][2]string{l.A: {"198.18.0.1", "2001:2::1"}, l.B: {"198.18.0.2", "2001:2::2"}, l.R: {"198.18.0.3", "2001:2::3"}}
	for h, want := range wantAddrs {
		if h.Addr.String() != want[0] || h.Addr6.String() != want[1] {
			t.Errorf("%s: Addr %v Addr6 %v, want %s %s", h.Name, h.Addr, h.Addr6, want[0], want[1])
		}
	}
	t.Run("routes only via R", func(t *testing.T) { checkRouterRoutes(t, l) })
	t.Run("forwarding only in R", func(t *testing.T) {
		for h, want := range map[*Host]string{l.A: "0", l.B: "0", l.R: "1"} {
			var got []byte
			if err := h.Do(func() (err error) { got, err = os.ReadFile("/proc/sys/net/ipv4/ip_forward"); return err }); err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(got)) != want {
				t.Errorf("%s ip_forward = %q, want %s", h.Name, got, want)
			}
		}
	})
	t.Run("shaper on R towards B only", func(t *testing.T) { checkRouterQdiscs(t, l) })
}

// checkRouterRoutes checks that A and B each have exactly one route with
// a gateway, to the other host's /31 via R, and no default route.
func checkRouterRoutes(t *testing.T, l *Lab) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tests := []struct {
		h         *Host
		fam, want string // `ip route` family flag and the one gatewayed route
		dst, via  string
	}{
		{l.A, "-4", "198.18.0.2/31 via 198.18.0.0 dev wbl-a", "198.18.0.2", "via 198.18.0.0"},
		{l.B, "-4", "198.18.0.0/31 via 198.18.0.3 dev wbl-b", "198.18.0.1", "via 198.18.0.3"},
		{l.A, "-6", "2001:2::2/127 via 2001:2:: dev wbl-a", "2001:2::2", "via 2001:2:: "},
		{l.B, "-6", "2001:2::/127 via 2001:2::3 dev wbl-b", "2001:2::1", "via 2001:2::3"},
	}
	for _, tt := range tests {
		out, err := tt.h.Command(ctx, "ip", tt.fam, "route", "show", "table", "main").CombinedOutput()
		if err != nil {
			t.Fatalf("ip route in %s: %v: %s", tt.h.Name, err, out)
		}
		var gw []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if strings.HasPrefix(line, "default") {
				t.Errorf("%s has a default route: %s", tt.h.Name, line)
			}
			if strings.Contains(line, " via ") {
				gw = append(gw, line)
			}
		}
		if len(gw) != 1 || !strings.HasPrefix(gw[0], tt.want) {
			t.Errorf("%s %s routes via a gateway: %q, want only %q\n%s", tt.h.Name, tt.fam, gw, tt.want, out)
		}
		out, err = tt.h.Command(ctx, "ip", "route", "get", tt.dst).CombinedOutput()
		if err != nil || !strings.Contains(string(out), tt.via) {
			t.Errorf("ip route get %s in %s (%v): %s; want %q", tt.dst, tt.h.Name, err, out, tt.via)
		}
	}
}

// checkRouterQdiscs checks that only R's egress towards B carries the
// shaper and that every end sends one segment per skb.
func checkRouterQdiscs(t *testing.T, l *Lab) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, e := range l.ends() {
		out, err := exec.CommandContext(ctx, "tc", "-d", "-n", e.h.Name, "qdisc", "show", "dev", e.ifname).CombinedOutput()
		if err != nil {
			t.Fatalf("tc qdisc show %s: %v: %s", e.ifname, err, out)
		}
		shaped := e.h == l.R && e.ifname == ifnameRB
		if got := strings.Contains(string(out), "htb"); got != shaped {
			t.Errorf("%s in %s: htb present %v, want %v:\n%s", e.ifname, e.h.Name, got, shaped, out)
		}
		if shaped {
			checkFilledQdisc(ctx, t, e.h, e.ifname, "10Mbit")
		}
		link, err := e.h.sys.nl.LinkByName(e.ifname)
		if err != nil {
			t.Fatal(err)
		}
		if got := link.Attrs().GSOMaxSegs; got != 1 {
			t.Errorf("%s in %s: gso_max_segs %d, want 1", e.ifname, e.h.Name, got)
		}
	}
	if l.A.Shaped || l.B.Shaped || !l.R.Shaped {
		t.Errorf("Shaped: A %v B %v R %v, want false false true", l.A.Shaped, l.B.Shaped, l.R.Shaped)
	}
}

// TestRouterConnectivity checks that A reaches B over UDP and TCP, IPv4 and
// IPv6, and that the traffic crosses R: R's counters on its end towards B
// grow by at least the packets sent.
func TestRouterConnectivity(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "rtrconn", Router: true, IPv6: true})
	tests := []struct {
		name string
		echo func(*testing.T, *Lab, netip.Addr) []byte
		addr netip.Addr
	}{
		{"udp4", udpEcho, l.B.Addr},
		{"tcp4", tcpEcho, l.B.Addr},
		{"udp6", udpEcho, l.B.Addr6},
		{"tcp6", tcpEcho, l.B.Addr6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := txPackets(t, l.R, ifnameRB)
			if got := tt.echo(t, l, tt.addr); string(got) != "hello from A" {
				t.Fatalf("echo = %q", got)
			}
			if after := txPackets(t, l.R, ifnameRB); after < before+1 {
				t.Fatalf("R sent %d packets towards B during the echo, want at least 1", after-before)
			}
		})
	}
}

// TestRelayOnly: with RelayOnly, R forwards nothing and A and B have no
// route to each other: A's datagram to B fails at once with "network
// unreachable", while A reaches R's address on its own link and R reaches
// B, which is what a relay in R needs.
func TestRelayOnly(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "rtronly", Router: true, RelayOnly: true})
	for _, h := range []*Host{l.A, l.B, l.R} {
		var got []byte
		if err := h.Do(func() (err error) { got, err = os.ReadFile("/proc/sys/net/ipv4/ip_forward"); return err }); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(got)) != "0" {
			t.Errorf("%s ip_forward = %q, want 0", h.Name, got)
		}
	}
	srv := listenInB(t, l)
	var c *net.UDPConn
	err := l.A.Do(func() (err error) {
		c, err = net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
		return err
	})
	if err == nil {
		c.Close()
		t.Fatalf("A could dial B at %v: want network unreachable", srv.LocalAddr())
	}
	if !errors.Is(err, syscall.ENETUNREACH) {
		t.Fatalf("A dialling B: %v, want network unreachable", err)
	}
	// A reaches R's side of their link, and R reaches B.
	ifname, rA, ok := l.RouterA()
	if !ok || ifname != "wbl-ra" || rA != netip.MustParseAddr("198.18.0.0") {
		t.Fatalf("RouterA() = %s %v %v, want wbl-ra 198.18.0.0", ifname, rA, ok)
	}
	var rsrv *net.UDPConn
	if err := l.R.Do(func() (err error) {
		rsrv, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(rA, 0)))
		return err
	}); err != nil {
		t.Fatalf("listen in R on %v: %v", rA, err)
	}
	defer rsrv.Close()
	for _, tt := range []struct {
		from *Host
		to   *net.UDPConn
	}{{l.A, rsrv}, {l.R, srv}} {
		var c *net.UDPConn
		if err := tt.from.Do(func() (err error) {
			c, err = net.DialUDP("udp", nil, tt.to.LocalAddr().(*net.UDPAddr))
			return err
		}); err != nil {
			t.Fatalf("dial from %s to %v: %v", tt.from.Name, tt.to.LocalAddr(), err)
		}
		_, err := c.Write([]byte("hop"))
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		tt.to.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 10)
		if n, _, err := tt.to.ReadFromUDPAddrPort(buf); err != nil || string(buf[:n]) != "hop" {
			t.Fatalf("%v received %q, %v", tt.to.LocalAddr(), buf[:n], err)
		}
	}
}

// txPackets returns the transmitted-packet counter of ifname in h.
func txPackets(t *testing.T, h *Host, ifname string) uint64 {
	t.Helper()
	link, err := h.sys.nl.LinkByName(ifname)
	if err != nil {
		t.Fatalf("find %s in %s: %v", ifname, h.Name, err)
	}
	return link.Attrs().Statistics.TxPackets
}

// TestRouterShaperLimits paces 1470-byte UDP datagrams from A to B at
// three times the 10 Mbit/s wire for about a second and measures at B.
// The shaper on R must bring them down to the wire's goodput (9.57
// Mbit/s); unshaped they would arrive at 30 Mbit/s. The bounds are wide
// (0.7 to 1.1 of the goodput) because this is not an accuracy test (those
// are in shaping_linux_test.go) and the machine may be busy: the check is
// that R shapes at all, and at the configured rate rather than another.
func TestRouterShaperLimits(t *testing.T) {
	requireLab(t)
	const (
		rate     = 10e6
		payload  = 1470
		offer    = 3 * rate
		sendFor  = time.Second
		maxCount = 3900 // a little over 1.5 s of the offer: a hard bound on the loop
	)
	l := newLab(t, Config{Name: "rtrshape", Router: true, RateBPS: rate})
	want := WireGoodput(rate, payload, 28)

	srv := listenInB(t, l)
	_ = srv.SetReadBuffer(4 << 20)
	type span struct {
		first, last time.Time
		n           int
		bytes       int64 // after the first datagram
	}
	rx := make(chan span, 1)
	go func() {
		var s span
		buf := make([]byte, 2048)
		hard := time.Now().Add(5 * time.Second)
		for {
			dl := hard
			if s.n > 0 {
				dl = time.Now().Add(300 * time.Millisecond)
			}
			srv.SetReadDeadline(dl)
			n, err := srv.Read(buf)
			now := time.Now()
			if err != nil {
				break
			}
			if s.n == 0 {
				s.first = now
			} else {
				s.bytes += int64(n)
			}
			s.last, s.n = now, s.n+1
		}
		rx <- s
	}()

	c := dialFromA(t, l, srv)
	buf := make([]byte, payload)
	sent := 0
	start := time.Now()
	for sent < maxCount {
		el := time.Since(start)
		if el >= sendFor {
			break
		}
		for due := int(el.Seconds() * offer / 8 / payload); sent < due && sent < maxCount; sent++ {
			if _, err := c.Write(buf); err != nil {
				t.Fatalf("send: %v", err)
			}
		}
		time.Sleep(time.Millisecond)
	}
	offered := float64(sent) * payload * 8 / time.Since(start).Seconds()
	s := <-rx
	if s.n < 100 {
		t.Fatalf("B received %d of %d datagrams", s.n, sent)
	}
	got := float64(s.bytes) * 8 / s.last.Sub(s.first).Seconds()
	t.Logf("offered %.2f Mbit/s (%d datagrams), B received %d over %v: %.3f Mbit/s; wire goodput %.3f Mbit/s",
		offered/1e6, sent, s.n, s.last.Sub(s.first).Round(time.Millisecond), got/1e6, want/1e6)
	if offered < 2*rate {
		t.Fatalf("offered only %.2f Mbit/s: the link was not driven above its rate", offered/1e6)
	}
	if got < 0.7*want || got > 1.1*want {
		t.Fatalf("received %.3f Mbit/s, want about the wire goodput %.3f (0.7 to 1.1 of it)", got/1e6, want/1e6)
	}
}

// dialFromA opens a UDP socket in host A connected to srv (in B), closed
// when the test ends.
func dialFromA(t *testing.T, l *Lab, srv *net.UDPConn) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	if err := l.A.Do(func() (err error) {
		c, err = net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
		return err
	}); err != nil {
		t.Fatalf("dial from A: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// listenInB opens a UDP socket on B's address, any port, closed when the
// test ends.
func listenInB(t *testing.T, l *Lab) *net.UDPConn {
	t.Helper()
	var srv *net.UDPConn
	if err := l.B.Do(func() (err error) {
		srv, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(l.B.Addr, 0)))
		return err
	}); err != nil {
		t.Fatalf("listen in B: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// checkFilledQdisc checks the filled wire's HTB tree on ifname in h: the
// wire's class at rate with the Ethernet overhead, the traffic's class
// first in priority, the filler's last, and the traffic's segmenting tbf.
func checkFilledQdisc(ctx context.Context, t *testing.T, h *Host, ifname, rate string) {
	t.Helper()
	out, err := exec.CommandContext(ctx, "tc", "-n", h.Name, "class", "show", "dev", ifname).CombinedOutput()
	if err != nil {
		t.Fatalf("tc class show: %v: %s", err, out)
	}
	for _, want := range []string{
		"class htb 1:1 root rate " + rate + " overhead 24 ceil " + rate,
		"class htb 1:10 parent 1:1 leaf 10: prio 0",
		"class htb 1:20 parent 1:1 leaf 20: prio 7",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s in %s: classes lack %q:\n%s", ifname, h.Name, want, out)
		}
	}
	out, err = exec.CommandContext(ctx, "tc", "-n", h.Name, "qdisc", "show", "dev", ifname).CombinedOutput()
	if err != nil {
		t.Fatalf("tc qdisc show: %v: %s", err, out)
	}
	for _, want := range []string{"qdisc htb 1: root", "qdisc tbf 10: parent 1:10", "qdisc pfifo 20: parent 1:20"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s in %s: qdiscs lack %q:\n%s", ifname, h.Name, want, out)
		}
	}
}
