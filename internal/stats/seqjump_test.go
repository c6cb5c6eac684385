package stats

import (
	"math/rand/v2"
	"testing"
)

// refSeq is the reference model of SeqTracker's window: the tracker as it
// was when it forgot skipped ids one bit at a time, kept here to check the
// word-wise forget against. Its Add is SeqTracker.Add with that forget.
type refSeq struct {
	started                                       bool
	base, max, unique, ooo, dups, tooOld, gapLost int64
	seen                                          []uint64
}

func newRefSeq(first int64) *refSeq {
	return &refSeq{base: first, max: first - 1, seen: make([]uint64, Window/64)}
}

func (r *refSeq) bit(id int64) (int, uint64) {
	u := uint64(id) % Window
	return int(u / 64), 1 << (u % 64)
}

func (r *refSeq) has(id int64) bool { w, b := r.bit(id); return r.seen[w]&b != 0 }
func (r *refSeq) mark(id int64)     { w, b := r.bit(id); r.seen[w] |= b }

func (r *refSeq) Add(id int64) Kind {
	if !r.started {
		r.started = true
		if id < r.base {
			r.base, r.max = id, id-1
		}
	}
	switch {
	case id > r.max:
		if id-r.max >= Window {
			clear(r.seen)
		} else {
			for i := r.max + 1; i < id; i++ {
				w, b := r.bit(i)
				r.seen[w] &^= b
			}
		}
		r.gapLost += id - r.max - 1
		r.max = id
		r.mark(id)
		r.unique++
		return New
	case id < r.base:
		if r.max-id >= Window {
			r.tooOld++
			r.ooo++
			return TooOld
		}
		r.gapLost += r.base - id - 1
		r.base = id
		r.mark(id)
		r.unique++
		r.ooo++
		return OutOfOrder
	case r.max-id >= Window:
		r.tooOld++
		r.ooo++
		r.unique++
		r.gapLost--
		return TooOld
	case r.has(id):
		r.dups++
		return Duplicate
	default:
		r.mark(id)
		r.unique++
		r.ooo++
		r.gapLost--
		return OutOfOrder
	}
}

// nextID picks the next id of a random stream around last: mostly the
// next one, often a jump ahead of any size up to past the window (landing
// on word and ring boundaries too), a step back, or a repeat.
func nextID(rng *rand.Rand, last int64) int64 {
	switch p := rng.IntN(100); {
	case p < 40:
		return last + 1
	case p < 55:
		return last + 1 + rng.Int64N(130)
	case p < 65:
		return last + Window - 2 + rng.Int64N(5) // just under, at and over the window
	case p < 75:
		return last + 1 + rng.Int64N(Window+200)
	case p < 80:
		return last - last%64 + 64*rng.Int64N(4) // word boundaries
	case p < 92:
		return last - rng.Int64N(2*Window)
	default:
		return last
	}
}

// TestSeqTrackerForgetMatchesPerBit: on random id streams (jumps of every
// size, across word and ring boundaries, negative ids, reordering,
// repeats, ids too old), the word-wise forget leaves every count, every
// arrival's kind and the whole window exactly as forgetting one id at a
// time did.
func TestSeqTrackerForgetMatchesPerBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 2544))
	for round := range 100 {
		first := []int64{0, 1, -3 * Window / 2, 1<<32 - 5, rng.Int64N(1 << 40)}[round%5]
		got, want := NewSeqTracker(first), newRefSeq(first)
		id := first + rng.Int64N(3) - 1
		for step := range 300 {
			if k, wk := got.Add(id), want.Add(id); k != wk {
				t.Fatalf("round %d step %d: id %d is %v; the per-bit model says %v", round, step, id, k, wk)
			}
			if got.base != want.base || got.max != want.max || got.unique != want.unique || got.outOfOrder != want.ooo ||
				got.duplicates != want.dups || got.tooOld != want.tooOld || got.gapLost != want.gapLost {
				t.Fatalf("round %d step %d (id %d): counts %+v differ from the per-bit model's %+v", round, step, id, *got, *want)
			}
			for w := range got.seen {
				if got.seen[w] != want.seen[w] {
					t.Fatalf("round %d step %d (id %d): window word %d is %#x; the per-bit model has %#x", round, step, id, w, got.seen[w], want.seen[w])
				}
			}
			id = nextID(rng, got.max)
		}
	}
}

// BenchmarkSeqJump is the cost of one datagram whose id jumps just under
// the window ahead of the last (a hostile or broken sender; each forgets
// almost the whole window): one bit per skipped id before, one word per
// 64 ids now.
func BenchmarkSeqJump(b *testing.B) {
	s := NewSeqTracker(1)
	id := int64(1)
	for b.Loop() {
		id += Window - 1
		s.Add(id)
	}
}

// BenchmarkSeqJumpPerBit is BenchmarkSeqJump on the per-bit reference
// model, the tracker as it was.
func BenchmarkSeqJumpPerBit(b *testing.B) {
	s := newRefSeq(1)
	id := int64(1)
	for b.Loop() {
		id += Window - 1
		s.Add(id)
	}
}
