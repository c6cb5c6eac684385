package findings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// done says whether a size finished test.
func done(sr result.RFC2544Size, test string) bool { return slices.Contains(sr.Done, test) }

// stalls words the throughput trials this host spoiled: how many, over
// how many sizes, and what followed them; each trial is detail.
func stalls(g *gather, r *result.RFC2544) {
	var sizes []int
	var trials, again, limited, ended int
	var detail []string
	for _, sr := range r.Sizes {
		if sr.DiscountedTrials == 0 || !done(sr, result.RFC2544TestThroughput) {
			continue
		}
		sizes = append(sizes, sr.Size)
		trials += sr.DiscountedTrials
		for _, d := range sr.Discounted {
			switch d.Then {
			case "run_again":
				again++
			case "host_limited":
				limited++
			case "search_ended":
				ended++
			}
			detail = append(detail, fmt.Sprintf("%d B: %s trial at %.0f/s: lost %d, our sender %.1f ms behind (the far end's queue holds %.1f ms): %s; then %s",
				sr.Size, d.Search, d.RatePPS, d.Lost, d.SenderLagMS, d.QueueMS, d.Reason, strings.ReplaceAll(d.Then, "_", " ")))
		}
	}
	if trials == 0 {
		return
	}
	c := g.get(result.RFC2544TestThroughput, CauseStalls)
	c.Detail = append(c.Detail, detail...)
	s := fmt.Sprintf("host stalls spoiled %s %s: our sender fell behind its schedule by more than the far end's queue holds, or our socket dropped, so none counts as the far end's loss",
		plural(trials, "throughput trial"), sizesWord(sizes))
	if again == trials {
		// Each was run again and a clean run decided (a document that
		// does not list them all does not show it): the figures
		// stand, and this is said for the reader to know.
		c.Text, c.Note = s+"; each was run again at its rate and a clean run decided, so the figures stand (--verbose lists each trial)", true
		return
	}
	if again > 0 {
		s += fmt.Sprintf("; %d were run again at their rate", again)
	}
	if limited > 0 {
		s += fmt.Sprintf("; at %s every try was spoiled, so those count as rates this host could not test", plural(limited, "rate"))
	}
	if ended > 0 {
		s += fmt.Sprintf("; %d ended their search", ended)
	}
	c.Text = s + "; a quieter host tests them (--verbose lists each trial)"
}

// hostLimit words the sizes whose NDR or PDR is this host's limit.
func hostLimit(g *gather, r *result.RFC2544) {
	var sizes []int
	var ndr, pdr bool
	for _, sr := range r.Sizes {
		if !done(sr, result.RFC2544TestThroughput) {
			continue
		}
		n := sr.NDR != nil && sr.NDR.LimitedByHost && sr.NDRPPS > 0
		p := sr.PDR != nil && sr.PDR.LimitedByHost && sr.PDRPPS > 0
		if n || p {
			sizes = append(sizes, sr.Size)
		}
		ndr, pdr = ndr || n, pdr || p
	}
	if len(sizes) == 0 {
		return
	}
	which := "NDR"
	switch {
	case ndr && pdr:
		which = "NDR or PDR"
	case pdr:
		which = "PDR"
	}
	g.get(result.RFC2544TestThroughput, CauseHostLimit).Text = fmt.Sprintf("%s the %s is this host's limit, not the far end's: it could not offer a higher rate that held, so the rate is a lower bound (>= in the table); a quieter or faster sender finds the far end's",
		strings.Replace(sizesWord(sizes), "over", "at", 1), which)
}

// burstCause is the cause a size's back-to-back warning is filed under:
// the first that qualifies its search, "" when none does.
func burstCause(sr result.RFC2544Size) string {
	bb := sr.BackToBack
	switch {
	case bb == nil:
		return ""
	case !bb.AtLineRate:
		return CauseBurstPace
	case bb.HostSpoiled || bb.DiscountedBursts > 0:
		return CauseBurstStalls
	case bb.Capped:
		return CauseBurstCapped
	}
	return ""
}

// bursts words what qualified the back-to-back searches: bursts this host
// sent below line rate, bursts its stalls spoiled, searches that reached
// the longest burst tried; and, once, what the tables then show.
func bursts(g *gather, r *result.RFC2544) {
	var pace, stall, spoiled, capped, unmeasured, bounded []int
	slowest, discounted := 100.0, 0
	for _, sr := range r.Sizes {
		bb := sr.BackToBack
		if bb == nil || !done(sr, result.RFC2544TestBackToBack) {
			continue
		}
		if !bb.AtLineRate {
			pace, slowest = append(pace, sr.Size), min(slowest, bb.SlowestPercent)
		}
		if bb.DiscountedBursts > 0 {
			stall, discounted = append(stall, sr.Size), discounted+bb.DiscountedBursts
		}
		if bb.HostSpoiled {
			spoiled = append(spoiled, sr.Size)
		}
		if bb.Capped && bb.AtLineRate && !bb.HostSpoiled {
			capped = append(capped, sr.Size)
		}
		switch b := boundOf(sr); {
		case b.Bound == result.RFC2544BoundExact, b.Bound == result.RFC2544BoundBetween && b.AtLeastFrames == b.AtMostFrames:
			// a result: the bursts that count pin it
		case b.Bound == result.RFC2544BoundNotMeasured:
			unmeasured = append(unmeasured, sr.Size)
		default:
			bounded = append(bounded, sr.Size)
		}
	}
	var so []string
	if len(unmeasured) > 0 {
		so = append(so, fmt.Sprintf("at %s back-to-back is not measured", sizeList(unmeasured)))
	}
	if n := len(bounded) - len(capped); n > 0 {
		so = append(so, fmt.Sprintf("at %s the length is a bound from the bursts that count", plural(n, "size")))
	}
	tail := ""
	if len(so) > 0 {
		tail = ": " + strings.Join(so, ", and ") + " (the table marks each)"
	}
	if len(pace) > 0 {
		g.get(result.RFC2544TestBackToBack, CauseBurstPace).Text = fmt.Sprintf("back-to-back: %s this host could not send a burst that lost nothing at the medium's line rate (the slowest went at %.1f %% of it): the far end drained meanwhile, so such a pass shows nothing%s; a quieter host, or a hardware tester, sends at line rate",
			strings.Replace(sizesWord(pace), "over", "at", 1), slowest, tail)
		tail = ""
	}
	if len(stall) > 0 {
		s := fmt.Sprintf("host stalls spoiled %s %s: our sender fell behind the line rate's schedule and caught up faster than the medium, so each was sent again",
			plural(discounted, "back-to-back burst"), sizesWord(stall))
		c := g.get(result.RFC2544TestBackToBack, CauseBurstStalls)
		if len(spoiled) > 0 {
			s += fmt.Sprintf("; at %s one length lost in every try, so its loss shows nothing", plural(len(spoiled), "size"))
		} else if tail == "" {
			// A clean try decided each, and no length is a bound:
			// the figures stand.
			s, c.Note = s+", and a clean try decided each, so the figures stand", true
		}
		c.Text = s + tail
	}
	if len(capped) > 0 {
		g.get(result.RFC2544TestBackToBack, CauseBurstCapped).Text = fmt.Sprintf("back-to-back: %s no burst up to %d frames was lost: the far end carries at least that (>= in the table); a higher --max-burst finds its limit",
			strings.Replace(sizesWord(capped), "over", "at", 1), r.Test.Schedule.MaxBurst)
	}
}

// lossOffered words the frame loss steps this host could not send at the
// rate asked.
func lossOffered(g *gather, r *result.RFC2544) {
	var sizes []int
	steps := 0
	for _, sr := range r.Sizes {
		if !done(sr, result.RFC2544TestLoss) {
			continue
		}
		n := 0
		for _, p := range sr.LossCurve {
			if p.HostLimited {
				n++
			}
		}
		if n > 0 {
			sizes, steps = append(sizes, sr.Size), steps+n
		}
	}
	if steps == 0 {
		return
	}
	g.get(result.RFC2544TestLoss, CauseLossOffered).Text = fmt.Sprintf("frame loss: at %s %s this host sent less than 99 %% of the rate asked (* in the table): the loss shown is at the rate it offered, below the share named",
		plural(steps, "step"), sizesWord(sizes))
}
