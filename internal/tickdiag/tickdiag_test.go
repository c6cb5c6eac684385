package tickdiag

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// burstSeries makes bursts of size frames spaced within by `within`, one
// burst every period, for total, with Gaussian jitter of sigma per frame.
func burstSeries(r *rand.Rand, size func() int, within, period, total, sigma time.Duration) []time.Duration {
	var out []time.Duration
	for start := time.Duration(0); start < total; start += period {
		n := size()
		for i := range n {
			out = append(out, start+time.Duration(i)*within+jitter(r, sigma))
		}
	}
	return sorted(out)
}

// evenSeries spaces frames evenly at fps for total, with jitter.
func evenSeries(r *rand.Rand, fps float64, total, sigma time.Duration) []time.Duration {
	var out []time.Duration
	step := time.Duration(float64(time.Second) / fps)
	for t := time.Duration(0); t < total; t += step {
		out = append(out, t+jitter(r, sigma))
	}
	return sorted(out)
}

func jitter(r *rand.Rand, sigma time.Duration) time.Duration {
	return time.Duration(r.NormFloat64() * float64(sigma))
}

func sorted(ts []time.Duration) []time.Duration {
	// Jitter can reorder neighbours; a capture is in arrival order.
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j] < ts[j-1]; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
	return ts
}

func fixed(n int) func() int { return func() int { return n } }

func TestDiagnoseFires(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name     string
		arrivals []time.Duration
		maxFPS   float64
		tick     float64
		size     float64
		message  string
	}{
		{"7 per 1 ms tick (seed 000, USB)", burstSeries(r, fixed(7), 20*time.Microsecond, time.Millisecond, 2*time.Second, 5*time.Microsecond), 34666, 1000, 7,
			"about 7 frames per 1 ms tick: the path looks limited by a timer (a driver or stack handling a fixed number of frames per tick), not by bandwidth"},
		{"8 per 1 ms tick, 1G Ethernet spacing", burstSeries(r, fixed(8), 12300*time.Nanosecond, time.Millisecond, 2*time.Second, 3*time.Microsecond), 81274, 1000, 8,
			"about 8 frames per 1 ms tick"},
		{"sizes 6 to 8, 7 on average", burstSeries(r, func() int { return 6 + r.IntN(3) }, 15*time.Microsecond, time.Millisecond, 3*time.Second, 4*time.Microsecond), 0, 1000, 7,
			"about 7 frames per 1 ms tick"},
		{"30 per 4 ms tick (250 Hz)", burstSeries(r, fixed(30), 10*time.Microsecond, 4*time.Millisecond, 2*time.Second, 5*time.Microsecond), 0, 250, 30,
			"about 30 frames per 4 ms tick"},
		{"3 per 125 µs microframe", burstSeries(r, fixed(3), 5*time.Microsecond, 125*time.Microsecond, 200*time.Millisecond, time.Microsecond), 0, 8000, 3,
			"about 3 frames per 125 µs tick"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnose(tt.arrivals, tt.maxFPS)
			if d == nil {
				t.Fatal("no diagnosis")
			}
			if d.TickHz != tt.tick || d.FramesPerTick != tt.size {
				t.Errorf("tick %v Hz, %v frames per tick; want %v Hz, %v", d.TickHz, d.FramesPerTick, tt.tick, tt.size)
			}
			if !strings.HasPrefix(d.Message, tt.message) {
				t.Errorf("message %q, want prefix %q", d.Message, tt.message)
			}
			if d.PhaseLock < MinPhaseLock || d.Bursts < 8 {
				t.Errorf("evidence %+v", d)
			}
			wantPeriod := time.Duration(float64(time.Second) / tt.tick)
			if diff := d.Period - wantPeriod; diff > wantPeriod/20 || diff < -wantPeriod/20 {
				t.Errorf("period %v, want about %v", d.Period, wantPeriod)
			}
		})
	}
}

func TestDiagnoseQuiet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	poisson := func(fps float64, total time.Duration) []time.Duration {
		var out []time.Duration
		for t := time.Duration(0); t < total; t += time.Duration(r.ExpFloat64() / fps * float64(time.Second)) {
			out = append(out, t)
		}
		return out
	}
	tests := []struct {
		name     string
		arrivals []time.Duration
		maxFPS   float64
	}{
		{"smooth 7000 fps", evenSeries(r, 7000, 2*time.Second, 0), 0},
		{"smooth 7000 fps with jitter", evenSeries(r, 7000, 2*time.Second, 10*time.Microsecond), 0},
		{"shaped link, evenly spaced at 8127 fps", evenSeries(r, 8127, 2*time.Second, 2*time.Microsecond), 8127},
		{"shaped link at exactly 8000 fps", evenSeries(r, 8000, 2*time.Second, time.Microsecond), 0},
		{"smooth 1000 fps: one frame per ms is not a burst", evenSeries(r, 1000, 2*time.Second, time.Microsecond), 0},
		{"random arrivals at 7000 fps", poisson(7000, 2*time.Second), 0},
		{"bursts of 7 every 1.05 ms: rate not a tick multiple", burstSeries(r, fixed(7), 20*time.Microsecond, 1050*time.Microsecond, 2*time.Second, 5*time.Microsecond), 0},
		{"bursts of 7 every 1 ms at the medium's limit", burstSeries(r, fixed(7), 20*time.Microsecond, time.Millisecond, 2*time.Second, 5*time.Microsecond), 7200},
		{"bursts filling the tick: no phase lock", burstSeries(r, fixed(7), 140*time.Microsecond, time.Millisecond, 2*time.Second, 3*time.Microsecond), 0},
		{"8 per 1 ms tick at 100M spacing: as busy as a saturated link", burstSeries(r, fixed(8), 123*time.Microsecond, time.Millisecond, 2*time.Second, 3*time.Microsecond), 8127},
		{"too few frames", burstSeries(r, fixed(7), 20*time.Microsecond, time.Millisecond, 5*time.Millisecond, 0), 0},
		{"empty", nil, 0},
		{"unsorted", []time.Duration{3, 2, 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := Diagnose(tt.arrivals, tt.maxFPS); d != nil {
				t.Errorf("diagnosis %+v, want none", *d)
			}
		})
	}
}

func TestFromNanos(t *testing.T) {
	got := FromNanos([]int64{1, 2000})
	if got[0] != time.Nanosecond || got[1] != 2*time.Microsecond {
		t.Errorf("FromNanos = %v", got)
	}
}
