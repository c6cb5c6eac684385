package findings

import (
	"fmt"

	"github.com/wirebench/wirebench/internal/result"
)

// lineShare is the share of the line rate a burst must reach to count as
// sent at line rate (the back-to-back test's own rule).
const lineShare = 0.99

// BurstBound decides what a back-to-back test's bursts bound. A search
// whose every deciding burst went at line rate and lost on the far end's
// account states its frames figure as measured (exact). When this host's
// sending qualifies it, a pass sent below line rate shows nothing (the far
// end drained meanwhile) and a loss during our sender's stall shows
// nothing either (the loss may be ours): only the bursts that count are
// read, the longest that went at line rate and lost nothing (at least
// that) and the shortest that lost without a stall of ours (at most one
// less). A search that saw both kinds of doubt thus says one thing: a
// bracket where the bursts give one, else not measured.
func BurstBound(bb *result.RFC2544BackToBack, linePPS float64) result.RFC2544BackToBack {
	out := result.RFC2544BackToBack{Bound: result.RFC2544BoundExact}
	if bb.AtLineRate && !bb.HostSpoiled && !bb.Capped {
		return out
	}
	lo, hi := int64(0), int64(-1) // hi < 0: no burst that counts lost
	for _, s := range bb.Searches {
		for _, b := range s.Bursts {
			switch {
			case b.Discounted:
			case b.Lost > 0:
				if hi < 0 || b.Frames-1 < hi {
					hi = b.Frames - 1
				}
			case b.Frames < 2 || b.OfferedPPS >= lineShare*linePPS:
				lo = max(lo, b.Frames)
			}
		}
	}
	switch {
	case hi >= 0 && lo > hi:
		// Bursts that count disagree (the far end varied between
		// searches): no bound stands.
		out.Bound = result.RFC2544BoundNotMeasured
	case hi >= 0 && (lo > 0 || hi == 0):
		out.Bound, out.AtLeastFrames, out.AtMostFrames = result.RFC2544BoundBetween, lo, hi
	case hi > 0:
		out.Bound, out.AtMostFrames = result.RFC2544BoundAtMost, hi
	case lo > 0:
		out.Bound, out.AtLeastFrames = result.RFC2544BoundAtLeast, lo
	default:
		out.Bound = result.RFC2544BoundNotMeasured
	}
	return out
}

// BurstTries is how often the back-to-back test sends a burst whose pace
// or whose loss this host spoiled before it counts.
const BurstTries = 3

// SizeBound is what size sr's back-to-back searches bound, from the
// document (Bound, AtLeastFrames, AtMostFrames; BurstBound for a document
// written before the bound was stated); ok is false when the size ran no
// back-to-back test. A Bound other than exact means its frames figure is
// no result: check and compare read the bound instead.
func SizeBound(sr result.RFC2544Size) (bb result.RFC2544BackToBack, ok bool) {
	if sr.BackToBack == nil || !done(sr, result.RFC2544TestBackToBack) {
		return bb, false
	}
	return boundOf(sr), true
}

// boundOf is a size's back-to-back test with its bound as its document
// states it, or as BurstBound decides it for a document written before it
// was stated.
func boundOf(sr result.RFC2544Size) result.RFC2544BackToBack {
	bb := *sr.BackToBack
	if bb.Bound == "" {
		b := BurstBound(&bb, sr.LinePPS)
		bb.Bound, bb.AtLeastFrames, bb.AtMostFrames = b.Bound, b.AtLeastFrames, b.AtMostFrames
	}
	return bb
}

// Cell is how a table prints the back-to-back frames of a size: the figure
// when it is a result, else its bound (">= 12", "<= 47", "12-46", with
// atLeast, atMost and dash the marks to use) or "not measured". line is
// the same in microseconds of line time. ok is false when the figure is no
// result (the searches' min and max are then not printed either).
func Cell(sr result.RFC2544Size, atLeast, atMost, dash string) (frames, line string, ok bool) {
	b := boundOf(sr)
	us := func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/sr.LinePPS*1e6) }
	switch b.Bound {
	case result.RFC2544BoundExact:
		return fmt.Sprint(sr.BackToBackFrames), fmt.Sprintf("%.1f", sr.BackToBackUS), true
	case result.RFC2544BoundAtLeast:
		return atLeast + fmt.Sprint(b.AtLeastFrames), atLeast + us(b.AtLeastFrames), false
	case result.RFC2544BoundAtMost:
		return atMost + fmt.Sprint(b.AtMostFrames), atMost + us(b.AtMostFrames), false
	case result.RFC2544BoundBetween:
		if b.AtLeastFrames == b.AtMostFrames {
			return fmt.Sprint(b.AtLeastFrames), us(b.AtLeastFrames), false
		}
		return fmt.Sprintf("%d%s%d", b.AtLeastFrames, dash, b.AtMostFrames), us(b.AtLeastFrames) + dash + us(b.AtMostFrames), false
	}
	return "not measured", dash, false
}

// BurstWords is a size's one back-to-back warning: what qualified the
// search and what the bursts then bound, said once; "" for a search that
// stands as measured. tries is how often a doubtful burst was sent.
func BurstWords(bb *result.RFC2544BackToBack, tries int, maxBurst int64) string {
	var why []string
	if !bb.AtLineRate {
		why = append(why, fmt.Sprintf("this host could not send a burst that lost nothing at the medium's line rate in %d tries (the slowest went at %.1f %% of it), so such a pass shows nothing", tries, bb.SlowestPercent))
	}
	if bb.HostSpoiled {
		why = append(why, fmt.Sprintf("a burst lost while this host's sender stalled in each of its %d tries (%d bursts discounted in all), so that loss shows nothing", tries, bb.DiscountedBursts))
	}
	if bb.Capped && bb.AtLineRate && !bb.HostSpoiled {
		return fmt.Sprintf("back-to-back: no burst up to %d frames was lost: the far end carries at least that", maxBurst)
	}
	if len(why) == 0 {
		return ""
	}
	s := "back-to-back: " + joinAnd(why)
	switch bb.Bound {
	case result.RFC2544BoundAtLeast:
		return s + fmt.Sprintf(": the bursts that count show at least %d frames", bb.AtLeastFrames)
	case result.RFC2544BoundAtMost:
		return s + fmt.Sprintf(": the bursts that count show at most %d frames", bb.AtMostFrames)
	case result.RFC2544BoundBetween:
		return s + fmt.Sprintf(": the bursts that count show %d to %d frames", bb.AtLeastFrames, bb.AtMostFrames)
	}
	return s + ": not measured, the bursts that count bound nothing"
}

func joinAnd(ss []string) string {
	switch len(ss) {
	case 0:
		return ""
	case 1:
		return ss[0]
	}
	out := ss[0]
	for _, s := range ss[1 : len(ss)-1] {
		out += "; " + s
	}
	return out + "; and " + ss[len(ss)-1]
}
