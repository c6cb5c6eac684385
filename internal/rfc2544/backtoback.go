package rfc2544

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544/findings"
	"github.com/wirebench/wirebench/internal/sweep"
)

// burstTries is how often a burst this host sent below line rate is sent
// again before it counts (flagged); a burst that lost while this host's
// sender stalled, likewise.
const burstTries = findings.BurstTries

// backToBack runs result.RFC2544Schedule.BurstRepeats searches; each after the first
// starts from the previous result.
func (b *bench) backToBack(ctx context.Context, sr *result.RFC2544Size) error {
	bb := &result.RFC2544BackToBack{AtLineRate: true, SlowestPercent: 100, MinFrames: -1}
	line := sr.LinePPS
	var start, sum int64
	reps := max(b.cfg.Schedule.BurstRepeats, 1)
	for i := 1; i <= reps; i++ {
		bs, capped, err := b.burstSearch(ctx, sr.Size, line, start, bb, i, reps)
		if err != nil || ctx.Err() != nil {
			return err
		}
		bb.Searches = append(bb.Searches, bs)
		bb.Capped = bb.Capped || capped
		start, sum = max(bs.Frames, 1), sum+bs.Frames
		if bb.MinFrames < 0 || bs.Frames < bb.MinFrames {
			bb.MinFrames = bs.Frames
		}
		bb.MaxFrames = max(bb.MaxFrames, bs.Frames)
	}
	sr.BackToBack = bb
	sr.BackToBackFrames = float64(sum) / float64(len(bb.Searches))
	sr.BackToBackUS = sr.BackToBackFrames / line * 1e6
	// What the bursts bound is decided here, once: a search this host's
	// sending qualified says one thing (findings.BurstBound), never both
	// "an upper bound" and "a lower bound".
	b2 := findings.BurstBound(bb, line)
	bb.Bound, bb.AtLeastFrames, bb.AtMostFrames = b2.Bound, b2.AtLeastFrames, b2.AtMostFrames
	if w := findings.BurstWords(bb, burstTries, b.cfg.Schedule.MaxBurst); w != "" {
		sr.Warnings = append(sr.Warnings, w)
	}
	return nil
}

// burstSearch finds the longest burst without loss: gallop from start (or
// 16) until a burst loses or the cap is reached, then bisect.
func (b *bench) burstSearch(ctx context.Context, size int, line float64, start int64, bb *result.RFC2544BackToBack, rep, reps int) (result.RFC2544BurstSearch, bool, error) {
	maxN := max(b.cfg.Schedule.MaxBurst, 2)
	bs := result.RFC2544BurstSearch{Bursts: []result.RFC2544Burst{}}
	lo, hi := int64(0), maxN+1 // longest pass, shortest fail
	send := func(n int64) (bool, error) {
		// A burst this host sent slower than line rate that lost
		// nothing is no evidence (the far end drained meanwhile): it is
		// sent again, up to burstTries times. One that lost is: at line
		// rate it would have lost as much or more.
		for try := 1; ; try++ {
			spec := sweep.Spec{Size: size, RatePPS: line, Packets: n}
			o, err := b.trial(ctx, result.RFC2544TestBackToBack, spec, func(o result.SweepOutcome) string {
				return fmt.Sprintf("search %d of %d, burst of %d at %.0f %% of line rate: lost %d", rep, reps, n, 100*o.OfferedPPS/line, o.Lost+o.Unreported)
			})
			if err != nil || ctx.Err() != nil {
				return false, err
			}
			lost := o.Lost + o.Unreported
			if o.NoReport {
				lost = n
			}
			spoiled := !o.NoReport && burstSpoiled(o, lost, line)
			bs.Bursts = append(bs.Bursts, result.RFC2544Burst{Frames: n, OfferedPPS: o.OfferedPPS, Lost: lost, SenderLagMS: o.MaxLagS * 1e3, Discounted: spoiled})
			if spoiled {
				// Our sender stalled in the burst and caught up faster
				// than line rate: the loss may be ours. Sent again; a
				// burst spoiled every time counts as lost (the length
				// found is then a lower bound), flagged.
				bb.DiscountedBursts++
				if try < burstTries {
					continue
				}
				bb.HostSpoiled = true
				return false, nil
			}
			slow := n >= 2 && o.OfferedPPS < 0.99*line
			if lost > 0 || !slow {
				return lost == 0, nil
			}
			if try == burstTries {
				bb.AtLineRate = false
				bb.SlowestPercent = min(bb.SlowestPercent, 100*o.OfferedPPS/line)
				return true, nil
			}
		}
	}
	n := min(max(start, 16), maxN)
	for hi > maxN && lo < maxN {
		ok, err := send(n)
		if err != nil || ctx.Err() != nil {
			return bs, false, err
		}
		if !ok {
			hi = n
			break
		}
		lo, n = n, min(2*n, maxN)
	}
	for hi-lo > 1 {
		n = (lo + hi) / 2
		if lo == 0 && start > 0 {
			n = max(1, hi/2) // coming down from the last result: halve
		}
		ok, err := send(n)
		if err != nil || ctx.Err() != nil {
			return bs, false, err
		}
		if ok {
			lo = n
		} else {
			hi = n
		}
	}
	bs.Frames = lo
	return bs, lo >= maxN, nil
}

// burstSpoiled says whether a burst that lost did so while our sender fell
// behind the line rate's schedule (by more than two frame times, and more
// than a batch of sends waits anyway) and caught up faster than the medium
// could have carried it, in a catch-up that holds all that was lost.
func burstSpoiled(o result.SweepOutcome, lost int64, line float64) bool {
	return lost > 0 && o.MaxLagS > max(2/line, burstLagFloor) && float64(lost) <= o.MaxLagS*line
}

// burstLagFloor is the least sender lag that spoils a burst: a few of the
// sender's batching windows (it gathers sends for up to 50 µs).
const burstLagFloor = 200e-6
