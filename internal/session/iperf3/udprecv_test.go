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

// TestUDPRecvAcrossThe32BitWrap: a stream with 32-bit counters whose ids
// run past 2^32 (its counter wraps to 0, 1, ...) with reordering, a
// duplicate and a loss on both sides of the wrap is counted exactly, as if
// the ids had not wrapped. Before, every id after the wrap counted as a
// late one from the start: the loss went down by one for each.
func TestUDPRecvAcrossThe32BitWrap(t *testing.T) {
	const w = 1 << 32
	at := time.Unix(1_700_000_000, 0)
	datagram := func(seq uint64) []byte {
		b := make([]byte, 100)
		if _, err := (i3wire.UDPHeader{Sec: uint32(at.Unix()), Seq: seq}).Put(b, false); err != nil {
			t.Fatal(err)
		}
		return b
	}
	// w-5 .. w+5, without w-3 and w+2 (lost), w-1 after w (reordered),
	// w+3 twice (a duplicate).
	ids := []uint64{w - 5, w - 4, w - 2, w, w - 1, w + 1, w + 3, w + 3, w + 4, w + 5}
	u := newI3UDPRecv(false)
	for _, id := range ids {
		u.feed(datagram(id), at)
	}
	tot := u.stop()
	// The receiver expects ids from 1: the w-6 before the first are lost too.
	want := i3UDPTotals{received: 9, maxSeq: w + 5, lost: w - 6 + 2, ooo: 1, dups: 1}
	if tot.received != want.received || tot.maxSeq != want.maxSeq || tot.lost != want.lost || tot.ooo != want.ooo ||
		tot.dups != want.dups || tot.bad != 0 {
		t.Fatalf("totals %+v; want received %d, max id %d, lost %d, out of order %d, duplicates %d, none bad",
			tot, want.received, want.maxSeq, want.lost, want.ooo, want.dups)
	}
	if got := u.rx.C.Snapshot(); got.Lost != want.lost || got.Packets != want.received {
		t.Errorf("counters %+v; want %d received, %d lost", got, want.received, want.lost)
	}
}

// TestExtendSeq32: the extension picks, of the 64-bit ids with the given
// low 32 bits, the one nearest the highest seen, on either side of a wrap.
func TestExtendSeq32(t *testing.T) {
	const w = 1 << 32
	for _, tc := range []struct {
		hi   int64
		seq  uint32
		want int64
	}{
		{0, 7, 7},
		{100, 101, 101},
		{100, 90, 90},
		{w - 1, 0, w},
		{w + 2, w - 1, w - 1},
		{5*w + 10, 3, 5*w + 3},
		{5*w + 10, w - 3, 5*w - 3},
		{3*w - 2, 5, 3*w + 5},
		{10, w - 1, -1}, // before the first id: refused by the caller
	} {
		if got := extendSeq32(tc.hi, tc.seq); got != tc.want {
			t.Errorf("extendSeq32(%d, %d) = %d; want %d", tc.hi, tc.seq, got, tc.want)
		}
	}
}
