package ping

import (
	"math"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// Summarize computes result.PingRTT over samples. Percentiles are exact
// nearest-rank values: the smallest sample with at least p % of the samples
// at or below it, so every percentile is a time that was measured.
func Summarize(samples []time.Duration) result.PingRTT {
	if len(samples) == 0 {
		return result.PingRTT{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum, sq float64
	for _, d := range s {
		f := float64(d)
		sum += f
		sq += f * f
	}
	n := float64(len(s))
	mean := sum / n
	variance := math.Max(sq/n-mean*mean, 0)
	return result.PingRTT{
		Min:  s[0],
		Avg:  time.Duration(math.Round(mean)),
		Max:  s[len(s)-1],
		Mdev: time.Duration(math.Round(math.Sqrt(variance))),
		P50:  Percentile(s, 50),
		P90:  Percentile(s, 90),
		P99:  Percentile(s, 99),
	}
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of
// sorted, which must be in ascending order.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}
