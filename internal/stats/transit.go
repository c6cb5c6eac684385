package stats

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Transit keeps the distribution of one-way transit times (arrival minus
// the sender's timestamp) of one stream in bounded memory. The two clocks
// may differ by any offset, so transits may be negative or huge: it keeps
// the exact minimum and maximum, and a histogram of each transit's
// deviation from the first one, in two halves (above and below it), so
// that the precision follows the deviation and not the offset. Its
// percentiles are transit times in the same terms as the minimum;
// subtracting the minimum gives the delay variation, which holds whatever
// the offset. It is not safe for concurrent use; the zero Transit is
// empty and allocates on the first sample.
type Transit struct {
	n        int64
	base     int64 // first transit, µs
	min, max int64 // µs
	above    *hdrhistogram.Histogram
	below    *hdrhistogram.Histogram // base − transit, for transits below base
	clamped  int64
}

// Histogram range and precision of a deviation from the first transit:
// 1 µs to 60 s at 2 significant digits (within 1 %), about 20 KiB a half,
// so a server holding many tests stays small. Deviations beyond are
// clamped (and counted); the exact minimum and maximum are kept apart.
const (
	transitHighest = int64(60 * time.Second / time.Microsecond)
	transitDigits  = 2
)

// AddMicros records one transit time in µs.
func (t *Transit) AddMicros(v int64) {
	if t.n == 0 {
		t.base, t.min, t.max = v, v, v
		t.above = hdrhistogram.New(1, transitHighest, transitDigits)
		t.below = hdrhistogram.New(1, transitHighest, transitDigits)
	}
	t.n++
	t.min, t.max = min(t.min, v), max(t.max, v)
	h, d := t.above, v-t.base
	if d < 0 {
		h, d = t.below, -d
	}
	if d > transitHighest {
		d = transitHighest
		t.clamped++
	}
	_ = h.RecordValue(d) // in range by construction
}

// Count returns how many stamped datagrams were recorded.
func (t *Transit) Count() int64 { return t.n }

// Clamped returns how many transits deviated from the first by more than
// the histogram holds (60 s): the percentiles then read too close to it.
func (t *Transit) Clamped() int64 { return t.clamped }

// Min and Max return the exact extremes in µs (0 when empty).
func (t *Transit) Min() int64 { return t.min }

// Max returns the largest transit in µs.
func (t *Transit) Max() int64 { return t.max }

// Percentile returns the transit in µs at or below which p percent
// (0 < p ≤ 100) of the datagrams arrived, within the histogram's
// precision, and never outside [Min, Max].
func (t *Transit) Percentile(p float64) int64 {
	if t.n == 0 {
		return 0
	}
	// The rank of the wanted sample in the whole, sorted ascending: the
	// below half's largest deviations come first.
	rank := max(int64(p/100*float64(t.n)+0.5), 1)
	nb := t.below.TotalCount()
	var v int64
	if rank <= nb {
		// The (nb−rank+1)-th smallest deviation below.
		q := 100 * float64(nb-rank+1) / float64(nb)
		v = t.base - t.below.ValueAtQuantile(q)
	} else {
		na := t.above.TotalCount()
		q := 100 * float64(rank-nb) / float64(na)
		v = t.base + t.above.ValueAtQuantile(q)
	}
	return min(max(v, t.min), t.max)
}
