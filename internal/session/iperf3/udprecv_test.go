package iperf3

import (
	"testing"
	"time"

	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// TestUDPRecvPublishesPerRead: an iperf3 UDP stream's counters show what
// was fed once the reader publishes (at the end of each read), not after
// each datagram; feed tells the reader which streams it owes a publish
// (once per read), and stop publishes the final counts itself.
func TestUDPRecvPublishesPerRead(t *testing.T) {
	u := newI3UDPRecv(false)
	at := time.Unix(1_700_000_000, 0)
	datagram := func(seq uint64) []byte {
		b := make([]byte, 100)
		if _, err := (i3wire.UDPHeader{Sec: uint32(at.Unix()), Seq: seq}).Put(b, false); err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !u.feed(datagram(1), at) {
		t.Fatal("the first datagram of a read did not ask for a publish")
	}
	if u.feed(datagram(2), at) {
		t.Fatal("the second datagram of a read asked for a publish again")
	}
	if got := u.rx.C.Packets.Load(); got != 0 {
		t.Fatalf("counters show %d datagrams before the publish, want 0", got)
	}
	u.publish()
	if got := u.rx.C.Snapshot(); got.Packets != 2 || got.Bytes != 200 {
		t.Fatalf("after the publish: %+v, want 2 datagrams of 200 bytes", got)
	}
	if !u.feed(datagram(4), at) {
		t.Fatal("the first datagram of the next read did not ask for a publish")
	}
	tot := u.stop()
	if got := u.rx.C.Snapshot(); got.Packets != 3 || got.Lost != 1 || tot.received != 3 {
		t.Fatalf("after stop: counters %+v, totals %+v; want 3 datagrams, 1 lost", got, tot)
	}
}
