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

func TestPacerUnpaced(t *testing.T) {
	p := New(&fakeClock{}, 0)
	if got := p.Due(time.Time{}, 32); got != 32 {
		t.Errorf("unpaced due = %d", got)
	}
}
