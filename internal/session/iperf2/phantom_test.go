package iperf2

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
)

// stampedDatagram is legacyDatagram(id) with a send stamp.
func stampedDatagram(id int32, sent time.Time) []byte {
	b := legacyDatagram(id)
	binary.BigEndian.PutUint32(b[4:], uint32(sent.Unix()))
	binary.BigEndian.PutUint32(b[8:], uint32(sent.Nanosecond()/1000))
	return b
}

// TestDuplicateAfterFINOpensNoTest: a copy of a datagram of a finished
// test, delivered after its FIN (the network duplicated it, or held it
// back), opens no new test: while the test is kept for late FINs, and
// after it was forgotten (the server remembers ended tests for a minute).
// Before, each copy opened a phantom test of one datagram, saved as a
// result. A new test from the same source (later send stamps) still opens
// one.
func TestDuplicateAfterFINOpensNoTest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFakeServer(ctx, session.ServerConfig{})
	const src = "10.0.0.7:40000"
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for id := range int32(5) {
		f.feed(ctx, src, stampedDatagram(id, at(int(id))))
	}
	f.feed(ctx, src, stampedDatagram(-5, at(5)))
	f.feed(ctx, src, stampedDatagram(2, at(2))) // kept to answer late FINs
	f.mu.Lock()
	for a, tt := range f.udpTests {
		if !tt.finished {
			t.Errorf("a copy of id 2 after the FIN opened a new test from %v", a)
		}
	}
	f.mu.Unlock()
	f.SweepUDP(ctx, time.Now().Add(finishedKeep+time.Second), true)
	f.mu.Lock()
	forgotten := len(f.udpTests) == 0
	f.mu.Unlock()
	if !forgotten {
		t.Fatal("the finished test was not forgotten (or a copy's test is running)")
	}
	f.feed(ctx, src, stampedDatagram(3, at(3))) // forgotten, remembered
	f.feed(ctx, src, stampedDatagram(4, at(4)))
	// A new test from the same source port: its sender's clock moved on.
	f.feed(ctx, src, stampedDatagram(0, at(20_000)))
	f.feed(ctx, src, stampedDatagram(1, at(20_001)))
	f.feed(ctx, src, stampedDatagram(-2, at(20_002)))
	f.SweepUDP(ctx, time.Now().Add(time.Hour), true) // ends anything still open
	f.WaitTests()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.results) != 2 {
		for _, r := range f.results {
			t.Logf("result: %+v", r.Receiver)
		}
		t.Fatalf("%d results, want 2 (the test and the new one; no phantom test from a copy)", len(f.results))
	}
	if rv := f.results[1].Receiver; rv == nil || rv.Packets != 3 || rv.Lost != 0 {
		t.Errorf("the new test received %+v, want its 3 datagrams (the FIN counted), none lost", rv)
	}
	n := 0
	for _, l := range f.logs {
		if strings.Contains(l, "took a datagram from 10.0.0.7:40000 for a late copy of one of its ended test") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d log lines of copies after the test was forgotten, want 2:\n%s", n, strings.Join(f.logs, "\n"))
	}
}

// TestRepeatedRunIsATestNotCopies: a sender that stamps every run alike
// (zperf's uptime stamps after a reboot, given the same source port) sends
// a new test whose datagrams repeat the ended test's ids and stamps: after
// StreamOf of them in a row it is a new test, and the ones taken for copies
// are its first datagrams, counted: while the old test is kept, and after
// it was forgotten.
func TestRepeatedRunIsATestNotCopies(t *testing.T) {
	for _, forget := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		f := newFakeServer(ctx, session.ServerConfig{})
		const src = "10.0.0.7:40000"
		t0 := time.Unix(100, 0) // uptime
		run := func() {
			for id := range int32(8) {
				f.feed(ctx, src, stampedDatagram(id, t0.Add(time.Duration(id)*time.Millisecond)))
			}
			f.feed(ctx, src, stampedDatagram(-8, t0.Add(8*time.Millisecond)))
		}
		run()
		if forget {
			f.SweepUDP(ctx, time.Now().Add(finishedKeep+time.Second), true)
		}
		run()
		f.SweepUDP(ctx, time.Now().Add(time.Hour), true)
		f.WaitTests()
		f.mu.Lock()
		if len(f.results) != 2 {
			t.Errorf("forgotten %v: %d results, want 2", forget, len(f.results))
		}
		for i, r := range f.results {
			if rv := r.Receiver; rv == nil || rv.Packets != 9 || rv.Lost != 0 {
				t.Errorf("forgotten %v: test %d received %+v, want all 9 datagrams (the FIN counted), none lost", forget, i+1, rv)
			}
		}
		f.mu.Unlock()
		cancel()
	}
}
