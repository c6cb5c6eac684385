package tickdiag

import (
	"slices"
	"strconv"
	"time"
)

// Window keeps the most recent arrival times of a stream, up to a fixed
// count, for Diagnose: a test of any length costs at most the same memory
// (8 bytes an arrival; a short test only what it used, growing by doubling
// up to the size), and the diagnosis looks at the stream's latest stretch
// of consecutive arrivals. It is owned by one
// goroutine; the zero Window keeps nothing (see NewWindow).
type Window struct {
	ring []time.Duration
	size int
	next int   // where the next arrival goes once the ring is full
	n    int64 // arrivals added in all
}

// NewWindow returns a window of the last size arrivals.
func NewWindow(size int) *Window { return &Window{size: max(size, 0)} }

// Add records one arrival time. Arrivals are expected in order.
func (w *Window) Add(at time.Duration) {
	if w.size == 0 {
		return
	}
	w.n++
	if len(w.ring) < w.size {
		if len(w.ring) == cap(w.ring) {
			grown := make([]time.Duration, len(w.ring), min(max(2*cap(w.ring), 64), w.size))
			copy(grown, w.ring)
			w.ring = grown
		}
		w.ring = append(w.ring, at)
		return
	}
	w.ring[w.next] = at
	w.next = (w.next + 1) % w.size
}

// Added returns how many arrivals were added in all.
func (w *Window) Added() int64 { return w.n }

// Len returns how many arrivals the window holds (at most its size).
func (w *Window) Len() int { return len(w.ring) }

// Cap returns the memory the window holds, in arrivals: never more than
// its size.
func (w *Window) Cap() int { return cap(w.ring) }

// Arrivals returns a copy of the arrivals held, oldest first.
func (w *Window) Arrivals() []time.Duration {
	out := make([]time.Duration, 0, len(w.ring))
	out = append(out, w.ring[w.next:]...)
	return append(out, w.ring[:w.next]...)
}

// Ordered puts the arrivals held in order, oldest first, in place (no
// copy: a server diagnosing many tests at once allocates nothing for it)
// and returns them: the slice is the window's own, valid until the next
// Add; read it, do not keep it.
func (w *Window) Ordered() []time.Duration {
	if w.next != 0 {
		slices.Reverse(w.ring[:w.next])
		slices.Reverse(w.ring[w.next:])
		slices.Reverse(w.ring)
		w.next = 0
	}
	return w.ring
}

// Covers says in words which arrivals the window holds, for a diagnosis
// made from it: "" when it holds every arrival.
func (w *Window) Covers() string {
	if w.n <= int64(len(w.ring)) {
		return ""
	}
	return "the last " + strconv.Itoa(len(w.ring)) + " of " + strconv.FormatInt(w.n, 10) + " arrivals"
}
