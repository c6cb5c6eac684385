package iperf2

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
)

// TestTCPReceiverClockStartsAtAccept: a TCP test whose bytes all arrived
// while the server was still busy before its receive loop (held here at
// the "tcp-test" point, after the header checks) is timed from the
// connection's accept, not from when the server got round to reading: its
// seconds cover the hold, and its rate is not inflated by the bytes that
// queued meanwhile. Before, the clock started after the checks and a 3 s
// upload in the eth100 lab read 100.13 % of the wire.
func TestTCPReceiverClockStartsAtAccept(t *testing.T) {
	ts := startServer(t, session.ServerConfig{})
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := netip.ParseAddrPort(c.LocalAddr().String())
	entered, release := make(chan time.Time, 1), make(chan struct{})
	hookFn := func(point string, peer netip.AddrPort) {
		if point != "tcp-test" || peer != src {
			return
		}
		entered <- time.Now()
		<-release
	}
	session.SetTestHook(hookFn)
	defer session.SetTestHook(nil)

	// Plain data from the first byte (as zperf sends): 64 KiB, then close.
	const size = 64 << 10
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	var at time.Time
	select {
	case at = <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never reached its test")
	}
	const hold = 300 * time.Millisecond
	time.Sleep(hold)
	held := time.Since(at) // at least hold, whatever the scheduler did
	close(release)

	r := ts.resultFrom(src.String())
	rv := receiverOf(t, r)
	if rv.Bytes != size {
		t.Fatalf("server counted %d bytes, want %d", rv.Bytes, size)
	}
	if got := time.Duration(rv.Seconds * float64(time.Second)); got < held {
		t.Errorf("receiver seconds %v, shorter than the %v the server was held after accepting: bytes that arrived before its clock started are divided by too short a time", got, held)
	}
}
