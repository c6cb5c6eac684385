package tickdiag

import (
	"slices"
	"testing"
	"time"
)

// TestWindowBounded feeds ten million arrivals: the window's memory never
// exceeds its size and is its size once full, and it holds the latest
// arrivals in order.
func TestWindowBounded(t *testing.T) {
	const size = 4096
	w := NewWindow(size)
	if w.Cap() != 0 {
		t.Fatalf("empty window holds %d arrivals of memory, want 0", w.Cap())
	}
	const n = 10_000_000
	for i := range n {
		w.Add(time.Duration(i) * time.Microsecond)
		if w.Cap() > size || (i >= size && w.Cap() != size) {
			t.Fatalf("after %d arrivals cap %d, want at most %d, and %d once full", i+1, w.Cap(), size, size)
		}
	}
	if w.Cap() != size || w.Len() != size || w.Added() != n {
		t.Fatalf("after %d arrivals: cap %d len %d added %d, want cap and len %d", n, w.Cap(), w.Len(), w.Added(), size)
	}
	got := w.Arrivals()
	if !slices.IsSorted(got) || got[0] != time.Duration(n-size)*time.Microsecond || got[size-1] != time.Duration(n-1)*time.Microsecond {
		t.Fatalf("window holds %v .. %v (sorted %v), want the last %d arrivals", got[0], got[size-1], slices.IsSorted(got), size)
	}
	if ord := w.Ordered(); !slices.Equal(ord, got) {
		t.Fatalf("Ordered differs from Arrivals")
	}
	w.Add(time.Duration(n) * time.Microsecond) // the ring goes on after an in-place ordering
	if got := w.Arrivals(); got[0] != time.Duration(n-size+1)*time.Microsecond || got[size-1] != time.Duration(n)*time.Microsecond || w.Cap() != size {
		t.Fatalf("after Ordered and one more: %v .. %v, cap %d", got[0], got[size-1], w.Cap())
	}
	if c := w.Covers(); c != "the last 4096 of 10000001 arrivals" {
		t.Fatalf("Covers() = %q", c)
	}
}

// TestWindowPartial: a window not yet full holds every arrival and says so.
func TestWindowPartial(t *testing.T) {
	w := NewWindow(100)
	for i := range 10 {
		w.Add(time.Duration(i))
	}
	if got := w.Arrivals(); len(got) != 10 || got[9] != 9 || w.Covers() != "" || w.Cap() >= 100 {
		t.Fatalf("partial window: %v, covers %q, cap %d (want under the size, 100)", got, w.Covers(), w.Cap())
	}
}

// TestWindowDiagnoses: a timer-bound stream longer than the window is
// still found from the window's arrivals.
func TestWindowDiagnoses(t *testing.T) {
	w := NewWindow(2000)
	// 10 frames every 1 ms tick, 20 µs apart, for 2 s: 20,000 arrivals.
	for tick := range 2000 {
		for f := range 10 {
			w.Add(time.Duration(tick)*time.Millisecond + time.Duration(f)*20*time.Microsecond)
		}
	}
	d := Diagnose(w.Arrivals(), 0)
	if d == nil || d.TickHz != 1000 {
		t.Fatalf("diagnosis from the window: %+v, want a 1000 Hz tick", d)
	}
}
