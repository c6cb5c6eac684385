// Package tickdiag tells when a received stream looks limited by a timer
// rather than by bandwidth: a driver or stack that handles a fixed number
// of frames per tick of a periodic timer (100, 250, 1000 or 8000 Hz) gives
// a frame rate that is a near-exact multiple of the tick rate and arrivals
// that come in bursts, one burst per tick.
//
// Diagnose fires only when all of these hold:
//
//  1. the frame rate is within 1 % of k × tick for a common tick rate, and
//     well under what the medium allows (at most 90 % of its frames/s);
//  2. the arrivals come in bursts of two or more frames: most gaps are much
//     shorter than the mean gap, and a minority are long;
//  3. the bursts start one tick apart: the median interval between burst
//     starts is within 10 % of the tick period;
//  4. folding the arrival times modulo the tick period piles them up at one
//     phase (the mean resultant length of the phases is at least 0.5).
//
// A smooth stream at the same rate fails 2 and 4; a stream paced by a
// shaped bottleneck (evenly spaced arrivals) fails 2 and 4 as well, and
// usually 1. The package is pure: it takes timestamps and returns data.
package tickdiag

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// TickRates returns the timer rates, in Hz, the diagnosis looks for.
func TickRates() []float64 { return []float64{100, 250, 1000, 8000} }

// Thresholds of the diagnosis.
const (
	// MinFrames is the fewest arrivals the diagnosis looks at.
	MinFrames = 64
	// RateTolerance is how close the rate must be to a tick multiple.
	RateTolerance = 0.01
	// MaxShareOfMedium is the highest share of the medium's frame rate at
	// which a stream still counts as "well under" it.
	MaxShareOfMedium = 0.9
	// PeriodTolerance is how close the burst period must be to the tick.
	PeriodTolerance = 0.10
	// MinPhaseLock is the lowest mean resultant length of the folded phases.
	MinPhaseLock = 0.5
)

// Diagnosis is the finding and its evidence.
type Diagnosis struct {
	// Message is the finding in plain words.
	Message string `json:"message"`
	// TickHz is the timer rate the arrivals follow.
	TickHz float64 `json:"tick_hz"`
	// FramesPerTick is the median burst size.
	FramesPerTick float64 `json:"frames_per_tick"`
	// FrameRate is the measured frames per second.
	FrameRate float64 `json:"frame_rate"`
	// NearestMultiple is k × TickHz, the tick multiple nearest FrameRate.
	NearestMultiple float64 `json:"nearest_multiple"`
	// Offset is (FrameRate − NearestMultiple) / NearestMultiple.
	Offset float64 `json:"offset"`
	// Period is the dominant interval between burst starts.
	Period time.Duration `json:"period_ns"`
	// BurstGap is the median gap between bursts (the dominant long gap).
	BurstGap time.Duration `json:"burst_gap_ns"`
	// PhaseLock is the mean resultant length of the arrival phases folded
	// modulo the tick period: 1 when every frame lands at the same phase,
	// near 0 for a smooth stream.
	PhaseLock float64 `json:"phase_lock"`
	// Bursts is the number of bursts seen.
	Bursts int `json:"bursts"`
}

// Diagnose looks at sorted arrival times and, when the stream looks timer
// bound, returns the diagnosis; otherwise nil. maxFPS is the highest frame
// rate the medium allows for these frames; 0 when unknown.
func Diagnose(arrivals []time.Duration, maxFPS float64) *Diagnosis {
	n := len(arrivals)
	if n < MinFrames || !slices.IsSorted(arrivals) {
		return nil
	}
	span := (arrivals[n-1] - arrivals[0]).Seconds()
	if span <= 0 {
		return nil
	}
	rate := float64(n-1) / span
	if maxFPS > 0 && rate > MaxShareOfMedium*maxFPS {
		return nil
	}
	starts, sizes, longGap := bursts(arrivals, span/float64(n-1))
	if len(starts) < 8 {
		return nil // no burst structure (or too few bursts to tell)
	}
	period := medianDuration(diffs(starts))
	size := median(sizes)
	if size < 2 {
		return nil
	}
	for _, tick := range TickRates() {
		d := match(arrivals, rate, tick, period)
		if d == nil {
			continue
		}
		d.FramesPerTick, d.Bursts, d.BurstGap = size, len(starts), longGap
		d.Message = fmt.Sprintf("about %.0f frames per %s tick: the path looks limited by a timer (a driver or stack handling a fixed number of frames per tick), not by bandwidth", math.Round(size), tickWords(tick))
		return d
	}
	return nil
}

// match checks one tick rate against the rate, the burst period and the
// folded phases.
func match(arrivals []time.Duration, rate, tick float64, period time.Duration) *Diagnosis {
	k := math.Round(rate / tick)
	if k < 1 {
		return nil
	}
	multiple := k * tick
	offset := (rate - multiple) / multiple
	if math.Abs(offset) > RateTolerance {
		return nil
	}
	p := 1 / tick
	if math.Abs(period.Seconds()-p) > PeriodTolerance*p {
		return nil
	}
	lock := phaseLock(arrivals, p)
	if lock < MinPhaseLock {
		return nil
	}
	return &Diagnosis{TickHz: tick, FrameRate: rate, NearestMultiple: multiple, Offset: offset, Period: period, PhaseLock: lock}
}

// bursts splits the arrivals at gaps longer than half the mean gap and
// returns each burst's start, each burst's size and the median long gap.
// It returns no bursts when fewer than half the gaps are short, which is
// the case for any evenly spaced stream.
func bursts(arrivals []time.Duration, meanGap float64) (starts []time.Duration, sizes []float64, longGap time.Duration) {
	cut := time.Duration(meanGap / 2 * float64(time.Second))
	var long []time.Duration
	short := 0
	starts = []time.Duration{arrivals[0]}
	size := 1.0
	for i := 1; i < len(arrivals); i++ {
		g := arrivals[i] - arrivals[i-1]
		if g <= cut {
			short++
			size++
			continue
		}
		long = append(long, g)
		sizes = append(sizes, size)
		starts = append(starts, arrivals[i])
		size = 1
	}
	sizes = append(sizes, size)
	if short*2 < len(arrivals)-1 {
		return nil, nil, 0
	}
	// The first and last bursts may be cut short by the capture window.
	if len(sizes) > 2 {
		sizes = sizes[1 : len(sizes)-1]
	}
	return starts, sizes, medianDuration(long)
}

// phaseLock folds arrival times modulo period p (seconds) and returns the
// mean resultant length of the phases.
func phaseLock(arrivals []time.Duration, p float64) float64 {
	var sx, sy float64
	for _, a := range arrivals {
		phi := 2 * math.Pi * math.Mod(a.Seconds(), p) / p
		sx += math.Cos(phi)
		sy += math.Sin(phi)
	}
	return math.Hypot(sx, sy) / float64(len(arrivals))
}

func diffs(ts []time.Duration) []time.Duration {
	out := make([]time.Duration, 0, len(ts))
	for i := 1; i < len(ts); i++ {
		out = append(out, ts[i]-ts[i-1])
	}
	return out
}

func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[len(s)/2]
}

func tickWords(hz float64) string {
	d := time.Duration(float64(time.Second) / hz)
	if d >= time.Millisecond {
		return fmt.Sprintf("%g ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%g µs", float64(d)/float64(time.Microsecond))
}

// FromNanos converts arrival times in nanoseconds (kernel timestamps) to
// durations for Diagnose.
func FromNanos(ns []int64) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, v := range ns {
		out[i] = time.Duration(v)
	}
	return out
}
