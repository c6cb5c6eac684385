package compare

import (
	"fmt"
	"math"
	"strconv"

	"github.com/wirebench/wirebench/internal/result"
)

// Unclear is Judge's verdict where a figure is only a bound (Metric.Bound)
// that does not tell which run is better.
const Unclear = "unclear"

// boundMetric is an RFC 2544 size's back-to-back frames where its search
// ended with the bound bb: the bound, not the figure; ok is false where the
// bursts bound nothing (nothing to compare).
func boundMetric(name string, s result.RFC2544Size, bb result.RFC2544BackToBack) (Metric, bool) {
	m := Metric{Name: name, Unit: "frames", HigherIsBetter: true, AtMost: math.Inf(1)}
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	switch bb.Bound {
	case result.RFC2544BoundAtLeast:
		m.AtLeast, m.Bound = float64(bb.AtLeastFrames), ">= "+n(bb.AtLeastFrames)
	case result.RFC2544BoundAtMost:
		m.AtMost, m.Bound = float64(bb.AtMostFrames), "<= "+n(bb.AtMostFrames)
	case result.RFC2544BoundBetween:
		m.AtLeast, m.AtMost, m.Bound = float64(bb.AtLeastFrames), float64(bb.AtMostFrames), n(bb.AtLeastFrames)+"-"+n(bb.AtMostFrames)
	default:
		return m, false
	}
	m.Value = m.AtLeast
	if bb.Bound == result.RFC2544BoundAtMost {
		m.Value = m.AtMost
	}
	return m, true
}

// span is a metric's possible values: its own where it is a result.
func (m Metric) span() (lo, hi float64) {
	if m.Bound == "" {
		return m.Value, m.Value
	}
	return m.AtLeast, m.AtMost
}

// boundDiff compares two figures of which one or both are bounds: no
// ratio or difference, only what the bounds tell (B above A, below, or
// unclear).
func boundDiff(a, b Metric) Diff {
	d := Diff{Name: a.Name, Unit: a.Unit, HigherIsBetter: a.HigherIsBetter, A: a.Value, B: b.Value, ABound: a.Bound, BBound: b.Bound}
	alo, ahi := a.span()
	blo, bhi := b.span()
	which := "A's"
	switch {
	case a.Bound != "" && b.Bound != "":
		which = "A's and B's"
	case b.Bound != "":
		which = "B's"
	}
	s := fmt.Sprintf("%s figure is a bound, not a result (this host's sending qualified the back-to-back bursts): not compared as a ratio", which)
	switch {
	case blo > ahi:
		d.Bounded, d.order = s+"; every value B's allows is above every value A's allows", 1
	case bhi < alo:
		d.Bounded, d.order = s+"; every value B's allows is below every value A's allows", -1
	default:
		d.Bounded = s + "; the two overlap, so which is higher cannot be told"
	}
	return d
}

// boundVerdict is Judge's verdict on a Diff of bounds (boundDiff).
func (d Diff) boundVerdict() string {
	switch {
	case d.order == 0:
		return Unclear
	case (d.order > 0) == d.HigherIsBetter:
		return Better
	}
	return Worse
}
