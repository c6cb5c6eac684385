package loopback

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// TestFreeSeesTimeWait: a port a server listened on, whose accepted
// connection the server closed first (TIME_WAIT, with the SO_REUSEADDR the
// listener had), is not free, because a client's bind to it fails; a
// listener's bind, with the SO_REUSEADDR Go sets, would have taken it.
func TestFreeSeesTimeWait(t *testing.T) {
	port := FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	s.Close() // the server's side closes first: port's connection goes to TIME_WAIT
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Read(make([]byte, 1)) // its FIN
	c.Close()
	l2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("a listener could not bind port %d in TIME_WAIT either (%v): nothing to tell apart", port, err)
	}
	l2.Close()
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	d := net.Dialer{LocalAddr: &net.TCPAddr{Port: port}, Timeout: 5 * time.Second}
	if cc, err := d.Dial("tcp", other.Addr().String()); err == nil {
		cc.Close()
		t.Skipf("this kernel let a client bind port %d in TIME_WAIT: nothing to check", port)
	}
	if free(port) {
		t.Errorf("port %d in TIME_WAIT is free, but a client's bind to it fails", port)
	}
}
