package engine

import (
	"testing"
	"time"
)

// TestEndWith: the one rule both interval reporters (Intervals.Stop and
// the server's parallel-stream group) end their rows by.
func TestEndWith(t *testing.T) {
	const p = time.Second // window 100 ms
	ms := time.Millisecond
	for _, tc := range []struct {
		n             int
		last, at      time.Duration
		held, counted bool
		want          Ending
	}{
		{0, 0, 2 * p, false, true, EndFirstRow},
		{2, 2 * p, 2 * p, true, true, EndRelease},
		{2, 2 * p, 2*p + 50*ms, true, false, EndMerge},
		{2, 2 * p, 2*p + 50*ms, false, true, EndOwnRow},
		{2, 2 * p, 2*p + 50*ms, false, false, EndNoRow},
		{2, 2 * p, 2*p + 150*ms, true, false, EndOwnRow},
	} {
		if got := EndWith(tc.n, tc.last, tc.at, tc.held, tc.counted, p); got != tc.want {
			t.Errorf("EndWith(%d, %v, %v, held %v, counted %v) = %d, want %d", tc.n, tc.last, tc.at, tc.held, tc.counted, got, tc.want)
		}
	}
	if TailWindow(0) != ms || TailWindow(p) != 100*ms {
		t.Errorf("TailWindow: %v and %v, want 1ms and 100ms", TailWindow(0), TailWindow(p))
	}
}
