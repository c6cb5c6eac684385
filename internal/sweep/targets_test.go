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

// TestTargetsOnePass: one search finds the 0 % and the 0.5 % rates of a
// device that loses 0.4 % between them: each within the resolution under
// its own limit, each confirmed by a 10 s trial, every trial in both logs
// (the second's marked reused) and run once.
func TestTargetsOnePass(t *testing.T) {
	d := &lossyDevice{capPPS: 8000, lossyTop: 9000}
	cfg := fastConfig(512)
	cfg.Confirm, cfg.MaxTrials = 10*time.Second, 22 // as RFC 2544's search
	srs, err := SearchTargets(context.Background(), cfg, d, 512, []float64{0, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	ndr, pdr := srs[0], srs[1]
	for _, tr := range ndr.TrialLog {
		t.Logf("%.0f/s phase %d %v s: %s", tr.RatePPS, tr.Phase, tr.TrialS, tr.Verdict)
	}
	if len(ndr.TrialLog) != d.trials || len(pdr.TrialLog) != d.trials || ndr.Trials != d.trials || d.trials > 22 {
		t.Errorf("%d trials ran; logs %d and %d", d.trials, len(ndr.TrialLog), len(pdr.TrialLog))
	}
	for i, tr := range pdr.TrialLog {
		if !tr.Reused || tr.RatePPS != ndr.TrialLog[i].RatePPS || ndr.TrialLog[i].Reused {
			t.Errorf("log entry %d: NDR %+v PDR %+v", i, ndr.TrialLog[i], tr)
		}
	}
	for _, c := range []struct {
		name  string
		sr    *result.SweepSize
		limit float64
	}{{"0 %", ndr, 8000}, {"0.5 %", pdr, 9000 * 0.996 / 0.995}} { // above 9000/s it delivers 0.996 of 9000/s
		if !c.sr.Confirmed || c.sr.HeldS != 10 || c.sr.TriedPPS > c.limit || c.sr.TriedPPS < c.limit*0.99 {
			t.Errorf("%s: tried %.0f (confirmed %v, held %v s), want confirmed in 10 s within 1 %% under %.0f", c.name, c.sr.TriedPPS, c.sr.Confirmed, c.sr.HeldS, c.limit)
		}
	}
}
