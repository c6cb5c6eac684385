package sweep

import (
	"context"
	"math"
	"testing"
	"time"
)

// lossyDevice forwards everything up to capPPS, loses 0.4 % of what it is
// offered from there to lossyTop (so a 0.5 % criterion passes rates a 0 %
// one fails), and above that delivers what it did at lossyTop.
type lossyDevice struct {
	capPPS, lossyTop float64
	trials           int
}

func (d *lossyDevice) Trial(_ context.Context, s Spec) (Outcome, error) {
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
	return Outcome{Sent: sent, OfferedPPS: s.RatePPS, Received: sent - lost, Lost: lost, Total: sent, SendSeconds: secs, ReceiveSeconds: secs, BacklogKnown: true}, nil
}

// TestPriorReusedForLooserCriterion: a 0.5 % search seeded with a 0 %
// search's trials reuses them (marked reused, not run again), starts above
// the 0 % rate and finds the higher one; seeded with trials that settle it
// already (the limit is sharp), it runs no trial at all.
func TestPriorReusedForLooserCriterion(t *testing.T) {
	d := &lossyDevice{capPPS: 8000, lossyTop: 9000}
	cfg := fastConfig(512)
	cfg.Confirm = 2 * time.Second
	ndr := NewResult(Test{})
	if err := Run(context.Background(), cfg, d, ndr); err != nil {
		t.Fatal(err)
	}
	within(t, "NDR", ndr.Sizes[0].TriedPPS, 8000, 0.011)
	ran := d.trials
	cfg.LossPercent = 0.5
	cfg.Prior = map[int][]TrialRecord{512: ndr.Sizes[0].TrialLog}
	pdr := NewResult(Test{})
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
	ndr = NewResult(Test{})
	if err := Run(context.Background(), cfg, sharp, ndr); err != nil {
		t.Fatal(err)
	}
	cfg.LossPercent, cfg.Prior = 0.5, map[int][]TrialRecord{512: ndr.Sizes[0].TrialLog}
	ran = sharp.trials
	pdr = NewResult(Test{})
	if err := Run(context.Background(), cfg, sharp, pdr); err != nil {
		t.Fatal(err)
	}
	if sharp.trials != ran || pdr.Sizes[0].TriedPPS != ndr.Sizes[0].TriedPPS || !pdr.Sizes[0].Confirmed {
		t.Errorf("sharp limit: PDR ran %d trials, %.0f (confirmed %v), want 0 trials and NDR's %.0f", sharp.trials-ran, pdr.Sizes[0].TriedPPS, pdr.Sizes[0].Confirmed, ndr.Sizes[0].TriedPPS)
	}
}
