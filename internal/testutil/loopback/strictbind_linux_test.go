package loopback

import (
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/sockopt"
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

// TestFreePortWhileForking: a port FreePort returns can be bound by a
// client at once while other goroutines start processes. Before its
// probes held off forks, a child forked while a probe listener was open
// kept that listener until it exec'd, and the client's bind failed
// "address already in use" (a few times in 40 runs of a test that ran
// `ss` beside its client).
func TestFreePortWhileForking(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	go func() {
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ { // bounded: ends with the test at the latest
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command("true").Run()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	reuse := sockopt.Options{ReuseAddr: true}.Control() // as the client binds its --cport
	for i := range 300 {
		port := FreePort(t)
		d := net.Dialer{LocalAddr: &net.TCPAddr{Port: port}, Timeout: 5 * time.Second, Control: reuse}
		c, err := d.Dial("tcp", target.Addr().String())
		if err != nil {
			t.Fatalf("run %d: a client's bind to the port FreePort gave: %v", i, err)
		}
		c.Close()
	}
}
