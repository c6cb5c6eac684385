package sweep

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// lossyDevice forwards everything up to capPPS, loses 0.4 % of what it is
// offered from there to lossyTop (so a 0.5 % criterion passes rates a 0 %
// one fails), and above that delivers what it did at lossyTop.
type lossyDevice struct {
	capPPS, lossyTop float64
	trials           int
}

func (d *lossyDevice) Trial(_ context.Context, s Spec) (result.SweepOutcome, error) {
	d.trials++
	secs := s.Duration.Seconds()
	sent := int64(math.Round(s.RatePPS * secs))
	lost := int64(0)
	switch {
	case s.RatePPS > d.lossyTop:
		lost = sent - int64(d.lossyTop*secs*0.996) // it delivers no more than at lossyTop
	case s.RatePPS > d.capPPS:
		lost = sent * 4 / 1000
	}
	return result.SweepOutcome{Sent: sent, OfferedPPS: s.RatePPS, Received: sent - lost, Lost: lost, Total: sent, SendSeconds: secs, ReceiveSeconds: secs, BacklogKnown: true}, nil
}

// TestPriorReusedForLooserCriterion: a 0.5 % search seeded with a 0 %
// search's trials reuses them (marked reused, not run again), starts above
// the 0 % rate and finds the higher one; seeded with trials that settle it
// already (the limit is sharp), it runs no trial at all.
func TestPriorReusedForLooserCriterion(t *testing.T) {
	d := &lossyDevice{capPPS: 8000, lossyTop: 9000}
	cfg := fastConfig(512)
	cfg.Confirm = 2 * time.Second
	ndr := NewResult(result.SweepTest{})
	if err := Run(context.Background(), cfg, d, ndr); err != nil {
		t.Fatal(err)
	}
	within(t, "NDR", ndr.Sizes[0].TriedPPS, 8000, 0.011)
	ran := d.trials
	cfg.LossPercent = 0.5
	cfg.Prior = map[int][]result.SweepTrial{512: ndr.Sizes[0].TrialLog}
	pdr := NewResult(result.SweepTest{})
	if err := Run(context.Background(), cfg, d, pdr); err != nil {
		t.Fatal(err)
	}
	sr := pdr.Sizes[0]
	within(t, "PDR", sr.TriedPPS, 9000, 0.011)
	if !sr.Confirmed || sr.TriedPPS <= ndr.Sizes[0].TriedPPS {
		t.Errorf("PDR %.0f (confirmed %v), want confirmed above NDR %.0f", sr.TriedPPS, sr.Confirmed, ndr.Sizes[0].TriedPPS)
	}
	reusedN := 0
	for _, tr := range sr.TrialLog {
		if tr.Reused {
			reusedN++
		}
	}
	if reusedN != len(ndr.Sizes[0].TrialLog) || sr.Trials != d.trials-ran || sr.Trials >= ndr.Sizes[0].Trials {
		t.Errorf("PDR reused %d of %d trials and ran %d (NDR ran %d)", reusedN, len(ndr.Sizes[0].TrialLog), sr.Trials, ndr.Sizes[0].Trials)
	}

	// A sharp limit: the 0 % search's trials settle the 0.5 % one.
	sharp := &lossyDevice{capPPS: 8000, lossyTop: 8000}
	cfg.LossPercent, cfg.Prior = 0, nil
	ndr = NewResult(result.SweepTest{})
	if err := Run(context.Background(), cfg, sharp, ndr); err != nil {
		t.Fatal(err)
	}
	cfg.LossPercent, cfg.Prior = 0.5, map[int][]result.SweepTrial{512: ndr.Sizes[0].TrialLog}
	ran = sharp.trials
	pdr = NewResult(result.SweepTest{})
	if err := Run(context.Background(), cfg, sharp, pdr); err != nil {
		t.Fatal(err)
	}
	if sharp.trials != ran || pdr.Sizes[0].TriedPPS != ndr.Sizes[0].TriedPPS || !pdr.Sizes[0].Confirmed {
		t.Errorf("sharp limit: PDR ran %d trials, %.0f (confirmed %v), want 0 trials and NDR's %.0f", sharp.trials-ran, pdr.Sizes[0].TriedPPS, pdr.Sizes[0].Confirmed, ndr.Sizes[0].TriedPPS)
	}
}

// TestPriorMarginalConfirmation: a 0 % search that converged on 8425/s
// (8509/s failed on backlog, within the 1 % resolution), whose
// confirmation failed on backlog and passed when run again at the same
// rate (sweep's marginal rerun), settles the 0.5 % search: it runs no
// trial and reports that rate. (It searched again below the rate before.)
func TestPriorMarginalConfirmation(t *testing.T) {
	ok := result.SweepOutcome{Sent: 8425, OfferedPPS: 8425, Received: 8425, Total: 8425, SendSeconds: 1, BacklogKnown: true}
	long := ok
	long.Sent, long.Received, long.Total, long.SendSeconds = 84250, 84250, 84250, 10
	backlog := long
	backlog.BacklogS, backlog.ServicePPS = 0.1, 8340
	over := ok
	over.OfferedPPS, over.BacklogS, over.ServicePPS = 8762, 0.04, 8425
	prior := []result.SweepTrial{
		{Repeat: 1, RatePPS: 8425, TrialS: 1, SweepOutcome: ok},
		{Repeat: 1, RatePPS: 8762, TrialS: 1, SweepOutcome: over},
		{Repeat: 1, RatePPS: 8509, TrialS: 1, SweepOutcome: over},
		{Repeat: 1, RatePPS: 8425, TrialS: 10, Confirm: true, SweepOutcome: backlog},
		{Repeat: 1, RatePPS: 8425, TrialS: 10, Confirm: true, SweepOutcome: long},
	}
	prior[1].SweepOutcome.Sent, prior[1].SweepOutcome.Received, prior[1].SweepOutcome.Total = 8762, 8762, 8762
	prior[2].SweepOutcome.Sent, prior[2].SweepOutcome.Received, prior[2].SweepOutcome.Total, prior[2].SweepOutcome.OfferedPPS = 8509, 8509, 8509, 8509
	cfg := fastConfig(82)
	cfg.MaxPPS = func(int) float64 { return 84459 }
	cfg.Confirm, cfg.LossPercent = 10*time.Second, 0.5
	cfg.Prior = map[int][]result.SweepTrial{82: prior}
	res := NewResult(result.SweepTest{})
	r := RunnerFunc(func(context.Context, Spec) (result.SweepOutcome, error) {
		t.Error("a trial was run")
		return ok, nil
	})
	if err := Run(context.Background(), cfg, r, res); err != nil {
		t.Fatal(err)
	}
	if sr := res.Sizes[0]; sr.TriedPPS != 8425 || !sr.Confirmed || sr.Trials != 0 {
		t.Errorf("got %.0f (confirmed %v) in %d trials, want 8425 confirmed in 0", sr.TriedPPS, sr.Confirmed, sr.Trials)
	}
}
