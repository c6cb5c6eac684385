package stats

import (
	"testing"
	"time"
)

// TestThinnedBounded feeds ten million pairs: the sample never holds more
// than its size, its memory is its size, and what it holds is every
// Step-th pair of the series from the first, in order.
func TestThinnedBounded(t *testing.T) {
	const size = 1 << 12
	s := NewThinned(size)
	const n = 10_000_000
	for i := range int64(n) {
		s.Add(time.Duration(i), time.Duration(2*i))
		if len(s.Values()) > size || s.Cap() > size {
			t.Fatalf("after %d pairs: %d held, cap %d, want at most %d", i+1, len(s.Values()), s.Cap(), size)
		}
	}
	if s.Cap() != size || s.Added() != n {
		t.Fatalf("cap %d added %d, want %d and %d", s.Cap(), s.Added(), size, n)
	}
	step := s.Step()
	if step != 4096 { // 10M/4096 < 4096 held ≤ 10M/2048
		t.Fatalf("step %d, want 4096", step)
	}
	vs, ts := s.Values(), s.Times()
	if int64(len(vs)) != (n+step-1)/step {
		t.Fatalf("%d held, want %d", len(vs), (n+step-1)/step)
	}
	for i, v := range vs {
		if int64(v) != int64(i)*step || ts[i] != 2*v {
			t.Fatalf("pair %d is (%d, %d), want (%d, %d)", i, v, ts[i], int64(i)*step, 2*int64(i)*step)
		}
	}
}

// TestThinnedShort: a series shorter than the size is held whole.
func TestThinnedShort(t *testing.T) {
	s := NewThinned(100)
	for i := range 100 {
		s.Add(time.Duration(i), 0)
	}
	if len(s.Values()) != 100 || s.Step() != 1 {
		t.Fatalf("%d held at step %d, want 100 at 1", len(s.Values()), s.Step())
	}
	s.Add(100, 0)
	if len(s.Values()) != 51 || s.Step() != 2 || s.Values()[50] != 100 {
		t.Fatalf("after 101: %d held at step %d (last %d), want 51 at 2 ending at 100", len(s.Values()), s.Step(), s.Values()[len(s.Values())-1])
	}
}
