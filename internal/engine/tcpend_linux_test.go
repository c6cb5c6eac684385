package engine

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/stats"
)

// endSlack is how far past its end a send may return in these tests: the
// deadline itself is exact, the slack is for a loaded machine's scheduler.
const endSlack = 200 * time.Millisecond

// TestSendTCPStalledPeerEndsOnTime: a TCP send to a peer that stops reading
// fills the socket buffers and then blocks in its write; the write deadline
// at the test's end ends it there, within endSlack, as a normal end, and
// the count is what the kernel took (the peer reads exactly that many bytes
// afterwards), not the write's whole buffer.
func TestSendTCPStalledPeerEndsOnTime(t *testing.T) {
	for _, anchored := range []bool{false, true} {
		d, a := tcpPair(t) // nobody reads a until the send is over
		_ = d.(*net.TCPConn).SetWriteBuffer(256 << 10)
		_ = a.(*net.TCPConn).SetReadBuffer(256 << 10)
		dur := 300 * time.Millisecond
		if anchored {
			dur = 600 * time.Millisecond
		}
		// One write of 64 MiB, far more than both socket buffers hold:
		// it must be cut short.
		cfg := TCPSendConfig{Buffer: make([]byte, 64<<20), Duration: dur}
		end := time.Now().Add(dur)
		if anchored {
			// The test's clock started 300 ms before this sender: it
			// ends with that clock, not 300 ms later.
			cfg.End = end
			time.Sleep(300 * time.Millisecond)
		}
		var c stats.Counters
		res, err := SendTCP(context.Background(), d, cfg, &c)
		returned := time.Now()
		if err != nil {
			t.Fatalf("anchored=%v: a send cut short by its end returned %v", anchored, err)
		}
		if late := returned.Sub(end); late > endSlack || late < 0 {
			t.Errorf("anchored=%v: the send returned %v after its end (bound 0-%v)", anchored, late, endSlack)
		}
		if res.Bytes <= 0 || res.Bytes >= int64(len(cfg.Buffer)) || res.Writes != 1 {
			t.Errorf("anchored=%v: %d bytes in %d writes: want one write cut short", anchored, res.Bytes, res.Writes)
		}
		if c.Bytes.Load() != res.Bytes {
			t.Errorf("anchored=%v: counters %d, result %d", anchored, c.Bytes.Load(), res.Bytes)
		}
		d.Close()
		got, err := io.Copy(io.Discard, a)
		if err != nil {
			t.Fatal(err)
		}
		if got != res.Bytes {
			t.Errorf("anchored=%v: the peer read %d bytes, the sender counted %d", anchored, got, res.Bytes)
		}
		t.Logf("anchored=%v: %d bytes taken by the kernel, returned %v after the end", anchored, res.Bytes, returned.Sub(end))
	}
}

// TestSendTCPEndAlreadyPast: a sender whose test's end passed before it ran
// writes nothing and ends at once without an error.
func TestSendTCPEndAlreadyPast(t *testing.T) {
	d, _ := tcpPair(t)
	res, err := SendTCP(context.Background(), d, TCPSendConfig{Buffer: make([]byte, 1024), End: time.Now().Add(-time.Millisecond)}, new(stats.Counters))
	if err != nil || res.Bytes != 0 {
		t.Errorf("%d bytes, error %v: want 0 and none", res.Bytes, err)
	}
}

// TestReceiveTCPHold: a held receiver stops reading (its count stands still
// while the sender keeps writing), reads on after Resume, and in the end
// counts every byte the sender wrote, with no error.
func TestReceiveTCPHold(t *testing.T) {
	d, a := tcpPair(t)
	var hold Hold
	var rc stats.Counters
	type out struct {
		res TCPResult
		err error
	}
	got := make(chan out, 1)
	go func() {
		res, err := ReceiveTCPWith(context.Background(), a, TCPReceiveConfig{BufSize: 64 << 10, Hold: &hold}, &rc)
		got <- out{res, err}
	}()
	sendDone := make(chan TCPResult, 1)
	go func() {
		res, _ := SendTCP(context.Background(), d, TCPSendConfig{Buffer: make([]byte, 64<<10), Duration: 1500 * time.Millisecond}, new(stats.Counters))
		d.Close()
		sendDone <- res
	}()
	waitMoving := func(what string) {
		t.Helper()
		before := rc.Bytes.Load()
		for deadline := time.Now().Add(5 * time.Second); rc.Bytes.Load() == before; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the receiver read nothing for 5 s", what)
			}
		}
	}
	waitMoving("before the pause")
	hold.Pause()
	time.Sleep(50 * time.Millisecond) // a read under way ends
	held := rc.Bytes.Load()
	time.Sleep(200 * time.Millisecond)
	if n := rc.Bytes.Load(); n != held {
		t.Errorf("held, the receiver still read %d bytes", n-held)
	}
	hold.Resume()
	waitMoving("after Resume")
	sent := <-sendDone
	var o out
	select {
	case o = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the receiver did not end after the sender closed")
	}
	if o.err != nil || o.res.Bytes != sent.Bytes || rc.Bytes.Load() != sent.Bytes {
		t.Errorf("received %d (counters %d, error %v), sent %d", o.res.Bytes, rc.Bytes.Load(), o.err, sent.Bytes)
	}
}

// TestReceiveTCPHoldCancel: a receiver held when its context ends returns
// at once, without an error.
func TestReceiveTCPHoldCancel(t *testing.T) {
	_, a := tcpPair(t)
	var hold Hold
	hold.Pause()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := ReceiveTCPWith(ctx, a, TCPReceiveConfig{BufSize: 1024, Hold: &hold}, new(stats.Counters))
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("error %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a held receiver did not end with its context")
	}
}
