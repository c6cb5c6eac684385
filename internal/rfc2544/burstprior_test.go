package rfc2544

import (
	"testing"
	"time"
)

// TestBurstPrior: a device at line rate takes every burst, so the search
// doubles from 16 frames to the cap (14 bursts to 100000: 16 … 65536 and
// the cap, about twice the cap's frames); one whose NDR is below line rate
// is taken to lose at the middle of the doublings (1264 frames: 16 … 2048,
// 8 bursts) and bisects after (10 more), far fewer frames.
func TestBurstPrior(t *testing.T) {
	line := 8127.0 // 1518 B frames on 100 Mbit/s Ethernet
	full := burstPrior(100000, 0, line)
	if full.Trials != 14 {
		t.Errorf("at line rate: %v bursts, want 14", full.Trials)
	}
	if want := time.Duration((131056 + 100000) / line * float64(time.Second)); full.Nominal != want {
		t.Errorf("at line rate: %v of bursts, want %v", full.Nominal, want)
	}
	if got := burstPrior(100000, 1, line); got != full {
		t.Errorf("an NDR at line rate: %+v, want %+v", got, full)
	}
	q := burstPrior(100000, 0.1, line)
	if q.Trials != 18 {
		t.Errorf("below line rate: %v bursts, want 18", q.Trials)
	}
	if q.Nominal >= full.Nominal/10 {
		t.Errorf("below line rate: %v of bursts, want well under a tenth of %v", q.Nominal, full.Nominal)
	}
	if got := burstPrior(10, 0.1, line); got.Trials != 1 {
		t.Errorf("a cap under 16 frames: %v bursts, want 1 (the cap)", got.Trials)
	}
}
