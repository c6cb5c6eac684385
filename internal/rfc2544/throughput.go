package rfc2544

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// throughput finds a size's NDR and PDR in one multi-rate search
// (sweep.SearchTargets: every trial judged under both criteria), each
// confirmed by a trial of the full length.
func (b *bench) throughput(ctx context.Context, sr *result.RFC2544Size) error {
	j := &sweep.StallJudge{}
	found, err := b.search(ctx, sr.Size, j)
	if err != nil || found == nil {
		return err
	}
	ndr, pdr := found[0], found[1]
	sr.NDR, sr.PDR = ndr, pdr
	b.waitLate(sr)
	sr.NDRPPS, sr.NDRBPS = ndr.RatePPS, ndr.RateBPS
	sr.PDRPPS, sr.PDRBPS = pdr.RatePPS, pdr.RateBPS
	sr.NDRFound, sr.PDRFound = ndr.RatePPS > 0, pdr.RatePPS > 0
	if sr.NDRFound && sr.LinePPS > 0 {
		b.ndrShare = ndr.RatePPS / sr.LinePPS
	}
	sr.Discounted = append(discounted(j, "NDR", ndr), discounted(j, "PDR", pdr)...)
	sr.DiscountedTrials = len(sr.Discounted)
	if w := discountWarning(sr.Discounted); w != "" {
		sr.Warnings = append(sr.Warnings, w)
	}
	if w := lossFreeBacklog(ndr); w != "" {
		sr.Warnings = append(sr.Warnings, w)
	}
	for _, w := range ndr.Warnings {
		sr.Warnings = append(sr.Warnings, "NDR: "+w)
	}
	for _, w := range pdr.Warnings {
		sr.Warnings = append(sr.Warnings, "PDR: "+w)
	}
	if pdr.RatePPS < ndr.RatePPS*0.99 {
		// A rate that passed with no loss passes any loss criterion:
		// the PDR search confirmed a lower rate only when the far end's
		// rate moved between the trials (by more than the search's 1 %
		// resolution).
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("the PDR (%.0f/s) came out below the NDR (%.0f/s): the far end's rate changed between the trials; neither is steady", pdr.RatePPS, ndr.RatePPS))
	}
	return nil
}

// search runs the multi-rate search for one size under the NDR's and the
// PDR's criteria at once, with j telling the trials this host spoiled. It
// returns nil when interrupted.
func (b *bench) search(ctx context.Context, size int, j *sweep.StallJudge) ([]*result.SweepSize, error) {
	cfg := b.searchConfig(j)
	cfg.OnTrial = func(p sweep.Progress) {
		b.observeSearch(p)
		what := fmt.Sprintf("trial %d at %.0f/s for %s", p.Trial, p.RatePPS, p.Spec.Duration)
		if p.Outcome.Sent > 0 && len(p.Verdicts) == 2 {
			what += fmt.Sprintf(": NDR %s, PDR %s (loss %.3f %%)", p.Verdicts[0], p.Verdicts[1], sweep.LossPercent(p.Outcome))
		}
		b.progress(result.RFC2544TestThroughput, size, what, p.SearchLeft)
	}
	b.kept = b.newKeeper(size)
	found, err := sweep.SearchTargets(ctx, cfg, b.kept, size, []float64{0, b.cfg.PDRPercent})
	b.est.Unit(unitThroughput)
	b.started = true
	if ctx.Err() != nil || err != nil {
		return nil, err
	}
	return found, nil
}

// searchConfig is the throughput search's configuration (without its
// sizes and progress), with j judging the trials this host spoiled.
func (b *bench) searchConfig(j *sweep.StallJudge) sweep.Config {
	s := b.cfg.Schedule
	c := sweep.Config{MaxPPS: b.cfg.LinePPS, LinePPS: b.cfg.LinePPS, Trial: s.Search, Confirm: s.Confirm, NoBisect: true,
		Gap: b.cfg.Gap, BacklogFloor: b.cfg.BacklogFloor, Sleep: b.cfg.Sleep, Now: b.cfg.Now, StallRetries: stallRetries, MaxTrials: searchTrials}
	if j != nil {
		c.Spoiled = j.Spoiled
	}
	return c
}

// lossFreeBacklog says so when the NDR lies below a rate that lost
// nothing but was judged a backlog (the far end delivered less than we
// offered): a queue filling, or a far end that answers late, which read
// the same within one trial; "" when no such trial decided the NDR.
func lossFreeBacklog(ndr *result.SweepSize) string {
	var near *result.SweepTrial
	for i, tr := range ndr.TrialLog {
		if tr.Verdict == sweep.VerdictPace && tr.Lost == 0 && tr.RatePPS > ndr.TriedPPS && (near == nil || tr.RatePPS < near.RatePPS) {
			near = &ndr.TrialLog[i]
		}
	}
	if near == nil {
		return ""
	}
	return fmt.Sprintf("NDR: the rate just above it, %.0f/s, lost nothing, but the far end delivered %.0f/s of it and was taken for a queue filling; "+
		"a far end that answers late (a software device on a busy host) reads the same, so the NDR may lie below what the device sustains: a longer trial at that rate tells them apart",
		near.RatePPS, near.DeliveredPPS)
}

// discountWarning says how many throughput trials this host spoiled, and
// how many rates it left untested; "" when none.
func discountWarning(ds []result.RFC2544Discounted) string {
	if len(ds) == 0 {
		return ""
	}
	limited := 0
	for _, d := range ds {
		if d.Then == "host_limited" {
			limited++
		}
	}
	w := fmt.Sprintf("throughput: %d trials lost datagrams while this host spoiled them (the first: %s) and were not counted as the far end's loss (\"discounted\" lists them)", len(ds), ds[0].Reason)
	if limited > 0 {
		w += fmt.Sprintf("; at %d rates every try was spoiled, so those rates count as ones this host could not test (host-limited)", limited)
	}
	return w
}
