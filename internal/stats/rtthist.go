package stats

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wirebench/wirebench/internal/result"
)

// Histogram range and precision: 1 ns to 60 s at 3 significant digits
// (each value is known to within 0.1 %).
const (
	histLowest  = 1
	histHighest = int64(60 * time.Second)
	histDigits  = 3
	// binsPerDecade is the resolution of the coarse bins in a Summary.
	binsPerDecade = 20
)

// RTTRecorder collects round-trip times. It is not safe for concurrent use.
type RTTRecorder struct {
	h    *hdrhistogram.Histogram
	n    int64
	min  time.Duration
	max  time.Duration
	mean float64 // ns, running (Welford)
	m2   float64
	over int64 // samples beyond the histogram's range (clamped)
}

// NewRTTRecorder returns an empty recorder.
func NewRTTRecorder() *RTTRecorder {
	return &RTTRecorder{h: hdrhistogram.New(histLowest, histHighest, histDigits)}
}

// Record adds one RTT.
func (r *RTTRecorder) Record(d time.Duration) {
	v := int64(d)
	if v < histLowest {
		v = histLowest
	}
	if v > histHighest {
		v = histHighest
		r.over++
	}
	_ = r.h.RecordValue(v) // in range by construction
	r.n++
	if r.n == 1 || d < r.min {
		r.min = d
	}
	if d > r.max {
		r.max = d
	}
	delta := float64(d) - r.mean
	r.mean += delta / float64(r.n)
	r.m2 += delta * (float64(d) - r.mean)
}

// Count returns the number of samples.
func (r *RTTRecorder) Count() int64 { return r.n }

// Max returns the longest RTT recorded (0 before any).
func (r *RTTRecorder) Max() time.Duration { return r.max }

// Summary returns the distribution recorded so far.
func (r *RTTRecorder) Summary() result.RTTSummary {
	s := result.RTTSummary{Count: r.n, Bins: []result.RTTBin{}}
	if r.n == 0 {
		return s
	}
	s.Min, s.Max, s.Mean = ms(int64(r.min)), ms(int64(r.max)), r.mean/1e6
	s.StdDev = math.Sqrt(r.m2/float64(r.n)) / 1e6
	clamp := func(v int64) float64 { return ms(min(max(v, int64(r.min)), int64(r.max))) }
	s.P50 = clamp(r.h.ValueAtQuantile(50))
	s.P90 = clamp(r.h.ValueAtQuantile(90))
	s.P99 = clamp(r.h.ValueAtQuantile(99))
	s.P999 = clamp(r.h.ValueAtQuantile(99.9))
	s.Bins = coarseBins(r.h)
	return s
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// coarseBins merges the histogram's buckets into logarithmic bins, each
// bucket going to the bin holding its midpoint.
func coarseBins(h *hdrhistogram.Histogram) []result.RTTBin {
	bins := []result.RTTBin{}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		mid := float64(b.From+b.To) / 2
		k := math.Floor(math.Log10(max(mid, 1)) * binsPerDecade)
		from := math.Pow(10, k/binsPerDecade) / 1e6
		if n := len(bins); n > 0 && bins[n-1].From == from {
			bins[n-1].Count += b.Count
			continue
		}
		bins = append(bins, result.RTTBin{From: from, To: math.Pow(10, (k+1)/binsPerDecade) / 1e6, Count: b.Count})
	}
	return bins
}
