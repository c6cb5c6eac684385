package sweep

import (
	"testing"
	"time"
)

// TestMultiAfterFromTheSeenRate: a search whose first trial, at the
// highest rate, saw the far end deliver its rate jumps just under it and
// narrows from there: that trial, 2 of 1 s (the jump, and one just above
// the rate that fails), 2 of 3.2 s and the 10 s confirmation; one that
// saw nothing has more to halve.
func TestMultiAfterFromTheSeenRate(t *testing.T) {
	cfg := Config{Sizes: []int{1234}, MaxPPS: func(int) float64 { return 8000 }, Trial: time.Second, Confirm: 10 * time.Second}
	seen := multiAfter(cfg, 1234, 961)
	if seen.Trials != 6 {
		t.Errorf("after a first trial that saw 961/s delivered: %v trials (%v), want 6", seen.Trials, seen.Nominal)
	}
	if want := 3*time.Second + 2*3162277660*time.Nanosecond + 10*time.Second; (seen.Nominal - want).Abs() > time.Millisecond {
		t.Errorf("their length %v, want %v", seen.Nominal, want)
	}
	blind := multiAfter(cfg, 1234, 0)
	if blind.Trials <= seen.Trials {
		t.Errorf("after a first trial that saw nothing: %v trials, want more than %v", blind.Trials, seen.Trials)
	}
}
