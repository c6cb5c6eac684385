package ping

import (
	"testing"
	"time"
)

func TestTxQueue(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	var q txQueue
	s0 := Sent{At: at(0), key: q.sent(), stamped: true}
	s1 := Sent{At: at(100), key: q.sent(), stamped: true}
	q.add(txStamp{n: 1, at: at(130)}) // stamps may come out of order
	q.add(txStamp{n: 0, at: at(30)})

	if got, ok := q.take(s0); !ok || !got.Equal(at(30)) {
		t.Errorf("send 0: %v %v, want 30µs", got, ok)
	}
	if _, ok := q.take(s0); ok {
		t.Error("send 0 taken twice")
	}
	if got, ok := q.take(s1); !ok || !got.Equal(at(130)) {
		t.Errorf("send 1: %v %v, want 130µs", got, ok)
	}

	// A failed send reset the kernel's counter: numbering starts again at
	// 0 in a new generation, and a stamp of the old generation drained
	// late under the new one cannot pass for a newer send.
	q.reset()
	s2 := Sent{At: at(500), key: q.sent(), stamped: true}
	if s2.key.n != 0 || s2.key == s0.key {
		t.Fatalf("after reset: key %+v", s2.key)
	}
	q.add(txStamp{n: 0, at: at(200)}) // stale: stamped before s2 was sent
	if _, ok := q.take(s2); ok {
		t.Error("a stamp from before the send was accepted")
	}
}

func TestTxQueueBounded(t *testing.T) {
	var q txQueue
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 10 * txKeep {
		k := q.sent()
		q.add(txStamp{n: k.n, at: t0.Add(time.Duration(i))}) // never taken: probes not answered
	}
	if len(q.got) > txKeep+1 {
		t.Errorf("%d unclaimed stamps kept, want at most %d", len(q.got), txKeep+1)
	}
}
