package stats

import (
	"testing"
	"time"
)

// TestReceiverPublishes: a plain receiver shows each datagram in C at
// once; a Deferred one shows nothing until Publish, then exactly what a
// plain one shows, duplicates included.
func TestReceiverPublishes(t *testing.T) {
	at := time.Unix(1000, 0)
	feed := func(r *UDPReceiver) {
		for _, id := range []int64{1, 2, 4, 3, 3, 7} {
			r.Datagram(id, 100, at, at.Add(-time.Duration(id)*time.Microsecond))
			at = at.Add(time.Millisecond)
		}
	}
	plain, deferred := NewUDPReceiver(1), NewUDPReceiver(1)
	deferred.Deferred = true
	feed(plain)
	feed(deferred)
	want := plain.C.Snapshot()
	if want.Packets != 5 || want.Bytes != 500 || want.Duplicates != 1 || want.Lost != 2 || want.OutOfOrder != 1 || want.Jitter == 0 {
		t.Fatalf("plain receiver's counters: %+v", want)
	}
	if got := deferred.C.Snapshot(); got != (Snapshot{}) {
		t.Fatalf("deferred receiver published before Publish: %+v", got)
	}
	deferred.Publish()
	if got := deferred.C.Snapshot(); got != want {
		t.Fatalf("after Publish: %+v, want %+v", got, want)
	}
}
