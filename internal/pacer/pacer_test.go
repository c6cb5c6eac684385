package pacer

import (
	"context"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (f *fakeClock) Now() time.Time { return f.t }
func (f *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	if d > 0 {
		f.t = f.t.Add(d)
	}
	return nil
}

func TestPacerExactRate(t *testing.T) {
	for _, pps := range []float64{8.5, 850, 8503.4, 1e6} {
		c := &fakeClock{t: time.Unix(1000, 0)}
		p := New(c, pps)
		sent := 0
		end := c.t.Add(10 * time.Second)
		for c.t.Before(end) {
			sent += p.Due(c.Now(), 64)
			if err := p.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		// Packets due in [0, 10 s): floor(10*pps) plus the one at t=0,
		// released up to the first due time at or after the end.
		want := int(10*pps) + 1
		if d := sent - want; d < -1 || d > 1 {
			t.Errorf("pps %v: sent %d in 10 s, want %d", pps, sent, want)
		}
		if p.MaxLag() != 0 {
			t.Errorf("pps %v: lag %v with a perfect clock", pps, p.MaxLag())
		}
	}
}

func TestPacerCatchesUpAfterStall(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := New(c, 1000)
	p.Due(c.Now(), 64)
	c.t = c.t.Add(50 * time.Millisecond) // a 50 ms stall: 50 packets due
	got := p.Due(c.Now(), 64)
	if got != 50 {
		t.Errorf("due after stall = %d, want 50", got)
	}
	if p.MaxLag() < 48*time.Millisecond {
		t.Errorf("max lag %v, want about 49 ms", p.MaxLag())
	}
}

// TestPacerStalls: each episode behind the schedule by more than
// StallFloor is one stall, kept at its deepest lag, however many batches
// its catch-up takes; lags within the floor are none.
func TestPacerStalls(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := New(c, 10000) // one packet per 100 us
	step := func(d time.Duration, max int) int {
		c.t = c.t.Add(d)
		return p.Due(c.Now(), max)
	}
	step(0, 64)
	step(500*time.Microsecond, 64) // 0.4 ms late: within the floor
	step(8*time.Millisecond, 32)   // 8 ms late: a stall, caught up in 3 batches
	step(0, 32)
	step(0, 32)
	step(100*time.Microsecond, 32) // on time again
	step(3*time.Millisecond, 64)   // a second stall
	step(100*time.Microsecond, 64)
	lags, complete := p.Stalls()
	if len(lags) != 2 || !complete {
		t.Fatalf("stalls %v (complete %v), want two", lags, complete)
	}
	if lags[0] < 7800*time.Microsecond || lags[0] > 8*time.Millisecond || lags[1] < 2800*time.Microsecond || lags[1] > 3*time.Millisecond {
		t.Errorf("stall lags %v, want about 7.9 ms and 2.9 ms", lags)
	}
	if p.MaxLag() != lags[0] {
		t.Errorf("max lag %v, deepest stall %v", p.MaxLag(), lags[0])
	}
	p.SetRate(10000)
	if lags, _ := p.Stalls(); len(lags) != 0 {
		t.Errorf("stalls after SetRate: %v", lags)
	}
}

func TestPacerUnpaced(t *testing.T) {
	p := New(&fakeClock{}, 0)
	if got := p.Due(time.Time{}, 32); got != 32 {
		t.Errorf("unpaced due = %d", got)
	}
}

func TestPacerGather(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name   string
		pps    float64
		max    int
		window time.Duration
		want   time.Duration // after start, with nothing released yet
	}{
		// 1000 pps: a packet every 1 ms, longer than the window: no gathering.
		{"slow", 1000, 64, 50 * time.Microsecond, 0},
		// 1 Mpps: 50 more packets fit in 50 µs.
		{"fast", 1e6, 64, 50 * time.Microsecond, 50 * time.Microsecond},
		// capped by the batch: 63 more at 100 ns.
		{"capped", 1e7, 64, 50 * time.Microsecond, 6300 * time.Nanosecond},
		{"no batch", 1e6, 1, 50 * time.Microsecond, 0},
		{"no window", 1e6, 64, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{t: start}
			p := New(c, tt.pps)
			if got := p.Gather(tt.max, tt.window).Sub(start); got != tt.want {
				t.Errorf("Gather = start+%v, want start+%v", got, tt.want)
			}
		})
	}
}

// TestPacerGatherKeepsRate: a sender that wakes at Gather's times releases
// batches yet holds the exact average rate.
func TestPacerGatherKeepsRate(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := New(c, 1488095)
	sent, wakes, largest := 0, 0, 0
	end := c.t.Add(time.Second)
	for c.t.Before(end) {
		n := p.Due(c.Now(), 64)
		sent += n
		largest = max(largest, n)
		wakes++
		_ = c.Sleep(context.Background(), p.Gather(64, 50*time.Microsecond).Sub(c.Now()))
	}
	if want := 1488095 + 1; sent < want-64 || sent > want+64 {
		t.Errorf("sent %d in 1 s, want %d", sent, want)
	}
	if largest > 64 || largest < 60 {
		t.Errorf("largest batch %d, want up to 64 (about 74 fit in 50 µs)", largest)
	}
	if wakes > 1488095/60 {
		t.Errorf("%d wakes for %d packets: not batching", wakes, sent)
	}
}
