package sockopt

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// dialWith connects to a local listener with o applied before connect.
func dialWith(t *testing.T, o Options) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		if c, err := ln.Accept(); err == nil {
			t.Cleanup(func() { c.Close() })
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d := net.Dialer{Control: o.Control()}
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestControlSetsWhatTheKernelReports(t *testing.T) {
	c := dialWith(t, Options{Buffer: 64 << 10, MSS: 536, NoDelay: true, TOS: 0x10, SetTOS: true, TTL: 9})
	b, err := Granted(c.(syscall.Conn))
	if err != nil {
		t.Fatal(err)
	}
	if b.Send != 128<<10 || b.Receive != 128<<10 {
		t.Errorf("buffers %+v, want 131072 each (64 KiB, doubled by Linux)", b)
	}
	if w := b.Shortfall(64 << 10); w != "" {
		t.Errorf("granted in full, yet: %q", w)
	}
	raw, _ := c.(syscall.Conn).SyscallConn()
	for name, want := range map[string]struct {
		op opt
		v  int
	}{"IP_TOS": {ipTOS, 0x10}, "IP_TTL": {ipTTL, 9}, "TCP_NODELAY": {tcpNoDelay, 1}} {
		if got, err := getInt(raw, want.op); err != nil || got != want.v {
			t.Errorf("%s = %d, %v; want %d", name, got, err, want.v)
		}
	}
	// TCP_MAXSEG reads back the MSS in use, at most what was asked.
	if got, err := getInt(raw, tcpMaxSeg); err != nil || got > 536 || got < 88 {
		t.Errorf("TCP_MAXSEG = %d, %v; want at most 536", got, err)
	}
}

func TestShortfallWhenCapped(t *testing.T) {
	rmax, ok := sysctlMax("rmem_max")
	wmax, ok2 := sysctlMax("wmem_max")
	if !ok || !ok2 {
		t.Skip("net.core.rmem_max/wmem_max not readable")
	}
	ask := 2 * max(rmax, wmax)
	if ask > 1<<30 {
		t.Skipf("rmem_max %d is too large to ask past", rmax)
	}
	c := dialWith(t, Options{Buffer: ask})
	b, err := Granted(c.(syscall.Conn))
	if err != nil {
		t.Fatal(err)
	}
	w := b.Shortfall(ask)
	if Usable(b.Receive) >= ask || !strings.Contains(w, "rmem_max") || !strings.Contains(w, "wmem_max") {
		t.Errorf("asked %d, granted %+v; warning %q", ask, b, w)
	}
}

func TestApplyOnOpenConn(t *testing.T) {
	c := dialWith(t, Options{})
	if err := (Options{TOS: 0x28, SetTOS: true, Buffer: 32 << 10}).Apply(c.(syscall.Conn)); err != nil {
		t.Fatal(err)
	}
	raw, _ := c.(syscall.Conn).SyscallConn()
	var tos int
	_ = raw.Control(func(fd uintptr) { tos, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS) })
	if tos != 0x28 {
		t.Errorf("IP_TOS after Apply = %#x, want 0x28", tos)
	}
	if b, _ := Granted(c.(syscall.Conn)); b.Send != 64<<10 {
		t.Errorf("SO_SNDBUF after Apply = %d, want 65536", b.Send)
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []Options{{Buffer: -1}, {MSS: 20}, {MSS: 70000}, {TOS: 256, SetTOS: true}, {TTL: 300}} {
		if o.Validate() == nil {
			t.Errorf("%+v validated", o)
		}
	}
	if err := (Options{Buffer: 1 << 20, MSS: 1460, TOS: 0, SetTOS: true, TTL: 1}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestCongestionUnknown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	d := net.Dialer{Control: Options{Congestion: "no-such-algorithm"}.Control()}
	if c, err := d.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("an unknown congestion control was accepted")
	} else if !strings.Contains(err.Error(), "congestion") {
		t.Errorf("error %q does not say what failed", err)
	}
}
