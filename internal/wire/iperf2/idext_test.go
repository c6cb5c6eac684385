package iperf2

import (
	"math/rand/v2"
	"testing"
)

// raw32 is how a 32-bit sender's id reaches the receiver: its low 32 bits,
// sign-extended (ParseDatagram without seq64).
func raw32(id int64) int64 { return int64(int32(uint32(id))) }

// TestIDExtenderAcrossTheWrap: a stream from 0, one near 2^31 and one near
// 2^32 read exactly, data as data and the FIN (the next id negated) and its
// re-sends as FINs, where reading the 32 bits alone took id 2^31 for a FIN.
func TestIDExtenderAcrossTheWrap(t *testing.T) {
	for _, first := range []int64{0, 1, 1<<31 - 3, 1<<32 - 3, 5<<32 - 2} {
		var e IDExtender
		// A stream near 2^32 is reached by steps under 2^31, as a long
		// test's ids would pass there.
		for id := int64(0); id < first; id += 1 << 30 {
			if got := e.Extend(raw32(id)); got != id {
				t.Fatalf("first %d: stepping, id %d read as %d", first, id, got)
			}
		}
		for id := first; id < first+8; id++ {
			if got := e.Extend(raw32(id)); got != id {
				t.Fatalf("first %d: data id %d read as %d", first, id, got)
			}
		}
		for k := int64(0); k < 3; k++ { // the FIN and two re-sends
			fin := -(first + 8 + k)
			if got := e.Extend(raw32(fin)); got != fin {
				t.Errorf("first %d: FIN %d read as %d", first, fin, got)
			}
		}
	}
	if raw32(1<<31) >= 0 {
		t.Fatal("the test's premise: id 2^31 read alone is negative (a FIN)")
	}
}

// TestIDExtenderReordered: late and early datagrams within a wide window
// keep their ids past the wrap (away from the crossing itself, where a
// datagram's bits can mean both, see IDExtender).
func TestIDExtenderReordered(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	var e IDExtender
	base := int64(1<<31 + 1<<20)
	for id := int64(0); id < base; id += 1 << 30 {
		e.Extend(raw32(id))
	}
	e.Extend(raw32(base))
	for i := range 5000 {
		id := base + int64(i) + int64(r.IntN(400)) - 200
		if id <= base {
			continue
		}
		if got := e.Extend(raw32(id)); got != id {
			t.Fatalf("id %d read as %d", id, got)
		}
	}
}

// TestIDExtenderAsBefore: below 2^31 every id reads as ParseDatagram read
// it alone, FINs included.
func TestIDExtenderAsBefore(t *testing.T) {
	var e IDExtender
	for _, id := range []int64{0, 1, 2, 5, 4, 100, 99, 1000, -1001, -1002, 1000} {
		if got := e.Extend(id); got != id {
			t.Errorf("id %d read as %d", id, got)
		}
	}
}

// TestIDExtenderInOrderAtTheCrossing: datagrams in order, a swap of two
// neighbours included, read exactly through 2^31 and 2^32, and the FIN
// after them.
func TestIDExtenderInOrderAtTheCrossing(t *testing.T) {
	for _, cross := range []int64{1 << 31, 1 << 32} {
		var e IDExtender
		for id := int64(0); id < cross-10; id += 1 << 30 {
			e.Extend(raw32(id))
		}
		ids := []int64{}
		for id := cross - 10; id < cross+10; id++ {
			ids = append(ids, id)
		}
		ids[12], ids[13] = ids[13], ids[12] // cross+2 before cross+3
		for _, id := range ids {
			if got := e.Extend(raw32(id)); got != id {
				t.Fatalf("crossing %d: id %d read as %d", cross, id, got)
			}
		}
		if got := e.Extend(raw32(-(cross + 10))); got != -(cross + 10) {
			t.Errorf("crossing %d: the FIN read as %d", cross, got)
		}
	}
}

// TestIDExtenderFINWherever: a stream's FIN ends it wherever its count
// lies: in (2^30, 2^31), where the FIN's bits, read as data, are an id
// far ahead (at next 1.5×2^30, 2^30 ahead) and were taken for one, and
// just below 2^31, where they are a few ids ahead (next 2^31−5: the FIN's
// bits are id 2^31+5). Its re-sends are FINs too, and a datagram lost
// just before the FIN changes nothing.
func TestIDExtenderFINWherever(t *testing.T) {
	for _, next := range []int64{1<<30 + 2, 3 << 29, 1<<31 - 1<<12, 1<<31 - 5, 1<<31 - 1, 3<<31 - 5, 5<<30 + 7} {
		for _, lost := range []int64{0, 3} {
			var e IDExtender
			for id := int64(0); id < next-20; id += 1 << 29 {
				e.Extend(raw32(id))
			}
			for id := next - 20; id < next-lost; id++ {
				if got := e.Extend(raw32(id)); got != id {
					t.Fatalf("next %d: data id %d read as %d", next, id, got)
				}
			}
			for k := int64(0); k < 3; k++ {
				if got := e.Extend(raw32(-(next + k))); got != -(next + k) {
					t.Errorf("next %d, %d lost before it: FIN %d read as %d", next, lost, -(next + k), got)
				}
			}
		}
	}
}

// TestIDExtenderUpperWordDecides: where a datagram's two readings are
// both near (ids lost at 2^31 or 3×2^31), the upper id word an iperf 2.1
// sender writes unannounced says which one it is: a FIN after a lost
// tail, which the nearer reading takes for data, and data after a loss
// that straddles 3×2^31, which it takes for the FIN. A word that is
// neither (zperf's filler) leaves the nearer reading, and so does 0,
// which filler can be too: at 2^31 the data's upper half is 0, and such
// data is still taken for the FIN (the limit IDExtender states). Far from
// the crossing no word turns a FIN into data.
func TestIDExtenderUpperWordDecides(t *testing.T) {
	const zzzz = 0x7a7a7a7a
	upper := func(id int64) uint32 { return uint32(id >> 32) }
	for _, cross := range []int64{1 << 31, 3 << 31} {
		start := func() *IDExtender {
			e := &IDExtender{}
			for id := int64(0); id < cross-20; id += 1 << 29 {
				e.Extend(raw32(id))
			}
			for id := cross - 20; id < cross-5; id++ { // next: cross-5
				e.Extend(raw32(id))
			}
			return e
		}
		// The FIN, count cross+2 after 7 lost: its data reading, cross-2, is nearer.
		fin := -(cross + 2)
		if got := start().ExtendUpper(raw32(fin), upper(fin)); got != fin {
			t.Errorf("crossing %d: FIN %d after a lost tail, with its upper word, read as %d", cross, fin, got)
		}
		if got := start().Extend(raw32(fin)); got != cross-2 {
			t.Errorf("crossing %d: the premise: without the word, FIN %d reads as data %d, not %d", cross, fin, cross-2, got)
		}
		// Data cross+3 after 8 lost: its FIN reading, count cross-3, is nearer.
		want := cross + 3
		if cross == 1<<31 {
			want = -(cross - 3) // upper word 0: no help
		}
		if got := start().ExtendUpper(raw32(cross+3), upper(cross+3)); got != want {
			t.Errorf("crossing %d: data %d after a loss, with its upper word, read as %d, want %d", cross, cross+3, got, want)
		}
		if got := start().ExtendUpper(raw32(cross+3), zzzz); got != -(cross - 3) {
			t.Errorf("crossing %d: with filler, data %d after a loss read as %d, want the nearer reading %d", cross, cross+3, got, -(cross - 3))
		}
	}
	var e IDExtender
	for id := int64(0); id < 3<<29; id += 1 << 28 {
		e.Extend(raw32(id))
	}
	e.Extend(raw32(3<<29 - 1))
	if got := e.ExtendUpper(raw32(-(3 << 29)), 0); got != -(3 << 29) {
		t.Errorf("FIN at 1.5×2^30 with a zero upper word read as %d", got)
	}
}
