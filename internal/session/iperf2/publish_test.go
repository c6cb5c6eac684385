package iperf2

import (
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestUDPIntervalsSeeEachRead: a UDP test's counts reach its interval
// reports at the end of each read of the socket, not only at the FIN
// (the reader publishes them once per read, not per datagram): three
// datagrams and then silence show as three datagrams in an interval
// while the test still runs.
func TestUDPIntervalsSeeEachRead(t *testing.T) {
	var mu sync.Mutex
	var seen int64
	cfg := session.ServerConfig{IdleTimeout: 15 * time.Second, MaxDuration: 18 * time.Second, Interval: 20 * time.Millisecond,
		OnInterval: func(_ int, in result.Interval) { mu.Lock(); seen += in.Packets; mu.Unlock() }}
	ts := startServer(t, cfg)
	c := udpSock(t, ts)
	// A 10 s test, so that its intervals run on through a slow start.
	h := iperf2.NewClientHeader(true, 1, 5001)
	h.Amount = iperf2.AmountForDuration(10 * time.Second)
	datagram := func(id int64) []byte {
		b := h.AppendUDPTo(make([]byte, 16, 200))
		b = b[:cap(b)]
		iperf2.PutDatagram(b, iperf2.LayoutModern, id, time.Now())
		return b
	}
	for id := int64(1); id <= 3; id++ {
		send(t, c, datagram(id))
	}
	deadline := time.Now().Add(guard)
	for {
		mu.Lock()
		n := seen
		mu.Unlock()
		if n == 3 {
			break
		}
		if n > 3 || time.Now().After(deadline) {
			t.Fatalf("the running test's intervals counted %d datagrams, want 3 (within %v)", n, guard)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := ts.resultCount(); got != 0 {
		t.Fatalf("%d results before the FIN: the test ended early, and this proves nothing", got)
	}
	send(t, c, datagram(-4))
	if rep := readReport(t, c); rep.Datagrams != 4 || rep.Errors != 0 {
		t.Errorf("report: %+v", rep)
	}
	if rv := receiverOf(t, ts.waitResults(1)[0]); rv.Packets != 4 {
		t.Errorf("result: %d datagrams, want 4", rv.Packets)
	}
}
