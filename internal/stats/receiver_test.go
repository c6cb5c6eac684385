package stats

import (
	"testing"
	"time"
)

// TestReceiverPublishes: Datagram leaves C be; Publish stores every count,
// duplicates included, and a second Publish with nothing new changes
// nothing.
func TestReceiverPublishes(t *testing.T) {
	at := time.Unix(1000, 0)
	r := NewUDPReceiver(1)
	for _, id := range []int64{1, 2, 4, 3, 3, 7} {
		r.Datagram(id, 100, at, at.Add(-time.Duration(id)*time.Microsecond))
		at = at.Add(time.Millisecond)
	}
	if got := r.C.Snapshot(); got != (Snapshot{}) {
		t.Fatalf("the receiver published before Publish: %+v", got)
	}
	r.Publish()
	want := r.C.Snapshot()
	if want.Packets != 5 || want.Bytes != 500 || want.Duplicates != 1 || want.Lost != 2 || want.OutOfOrder != 1 || want.Jitter == 0 {
		t.Fatalf("after Publish: %+v", want)
	}
	r.Publish()
	if got := r.C.Snapshot(); got != want {
		t.Fatalf("after a second Publish: %+v, want %+v", got, want)
	}
}
