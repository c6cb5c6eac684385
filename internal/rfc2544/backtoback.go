package rfc2544

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// BackToBack is a size's back-to-back test: the searches for the longest
// burst at line rate carried without loss.
type BackToBack struct {
	Searches []BurstSearch `json:"searches"`
	// MinFrames and MaxFrames are the shortest and longest result over
	// the searches.
	MinFrames int64 `json:"min_frames"`
	MaxFrames int64 `json:"max_frames"`
	// AtLineRate is false when a burst that lost nothing was sent slower
	// than the medium's line rate (under 99 % of it) in each of its three
	// tries: the far end then had time to drain, and the length is an
	// upper bound of what it carries at line rate.
	AtLineRate bool `json:"at_line_rate"`
	// SlowestPercent is the slowest burst's rate as a share of line rate.
	SlowestPercent float64 `json:"slowest_percent_of_line"`
	// Capped says no burst up to Schedule.MaxBurst was lost: the far end
	// carries at least that.
	Capped bool `json:"capped,omitempty"`
}

// BurstSearch is one search: the bursts sent and the longest that lost
// nothing.
type BurstSearch struct {
	Frames int64   `json:"frames"`
	Bursts []Burst `json:"bursts"`
}

// Burst is one burst sent.
type Burst struct {
	Frames     int64   `json:"frames"`
	OfferedPPS float64 `json:"offered_pps"`
	Lost       int64   `json:"lost"`
}

// burstTries is how often a burst this host sent below line rate is sent
// again before it counts (flagged).
const burstTries = 3

// backToBack runs Schedule.BurstRepeats searches; each after the first
// starts from the previous result.
func (b *bench) backToBack(ctx context.Context, sr *SizeResult) error {
	bb := &BackToBack{AtLineRate: true, SlowestPercent: 100, MinFrames: -1}
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
	if !bb.AtLineRate {
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("back-to-back: this host could not send a burst that lost nothing at the medium's line rate in %d tries (the slowest went at %.1f %% of it): the far end had time to drain during it, so the length is an upper bound", burstTries, bb.SlowestPercent))
	}
	if bb.Capped {
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("back-to-back: no burst up to %d frames was lost: the far end carries at least that", b.cfg.Schedule.MaxBurst))
	}
	return nil
}

// burstSearch finds the longest burst without loss: gallop from start (or
// 16) until a burst loses or the cap is reached, then bisect.
func (b *bench) burstSearch(ctx context.Context, size int, line float64, start int64, bb *BackToBack, rep, reps int) (BurstSearch, bool, error) {
	maxN := max(b.cfg.Schedule.MaxBurst, 2)
	bs := BurstSearch{Bursts: []Burst{}}
	lo, hi := int64(0), maxN+1 // longest pass, shortest fail
	send := func(n int64) (bool, error) {
		// A burst this host sent slower than line rate that lost
		// nothing is no evidence (the far end drained meanwhile): it is
		// sent again, up to burstTries times. One that lost is: at line
		// rate it would have lost as much or more.
		for try := 1; ; try++ {
			spec := sweep.Spec{Size: size, RatePPS: line, Packets: n}
			o, err := b.trial(ctx, TestBackToBack, spec, func(o result.SweepOutcome) string {
				return fmt.Sprintf("search %d of %d, burst of %d at %.0f %% of line rate: lost %d", rep, reps, n, 100*o.OfferedPPS/line, o.Lost+o.Unreported)
			})
			if err != nil || ctx.Err() != nil {
				return false, err
			}
			lost := o.Lost + o.Unreported
			if o.NoReport {
				lost = n
			}
			bs.Bursts = append(bs.Bursts, Burst{Frames: n, OfferedPPS: o.OfferedPPS, Lost: lost})
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
