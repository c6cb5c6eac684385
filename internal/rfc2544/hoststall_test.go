package rfc2544

import (
	"context"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// stallingHost wraps fakeDevice: the trials it names come back as this
// host's stalls would leave them behind a far end with a 5 ms queue that
// keeps up with the rate: some datagrams lost, our sender 12 ms behind its
// schedule, the far end's queue empty for most of the trial.
type stallingHost struct {
	fakeDevice
	// stall says whether the n-th trial (from 1) at rate stalls.
	stall func(n int, rate float64) bool
	n     int
}

func (h *stallingHost) Trial(ctx context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	h.n++
	o, err := h.fakeDevice.Trial(ctx, s)
	o.RTT = &result.SweepRTT{Min: 1, P50: 1.1, P99: 5, Max: 6}
	if s.Packets == 0 && s.RatePPS <= h.capPPS && h.stall(h.n, s.RatePPS) {
		o.Lost, o.Received = 9, o.Sent-9
		o.MaxLagS = 0.012
	}
	return o, err
}

func throughputOnly() Config {
	cfg := fakeConfig()
	cfg.Sizes, cfg.Tests = []int{1472}, []string{result.RFC2544TestThroughput}
	return cfg
}

// TestStallRetried: trials below the far end's capacity that lose while
// our sender stalls are run again; a clean retry decides, so the NDR is
// the far end's, and each discounted trial is listed with its reason.
func TestStallRetried(t *testing.T) {
	// Every third trial stalls.
	d := &stallingHost{fakeDevice: fakeDevice{capPPS: 812, queue: 4}, stall: func(n int, _ float64) bool { return n%3 == 0 }}
	res := NewResult(result.RFC2544Test{})
	if err := Run(context.Background(), throughputOnly(), d, res); err != nil {
		t.Fatal(err)
	}
	sr := res.Sizes[0]
	if sr.NDRPPS < 812*0.99 || sr.NDRPPS > 812 || sr.NDR.LimitedByHost || !sr.NDR.Confirmed {
		t.Errorf("NDR %.1f (limited by host %v, confirmed %v), want 803.9 to 812", sr.NDRPPS, sr.NDR.LimitedByHost, sr.NDR.Confirmed)
	}
	if sr.DiscountedTrials == 0 || sr.DiscountedTrials != len(sr.Discounted) {
		t.Fatalf("discounted %d: %+v", sr.DiscountedTrials, sr.Discounted)
	}
	for _, x := range sr.Discounted {
		if x.Then != "run_again" || x.Lost != 9 || x.SenderLagMS != 12 || x.QueueMS != 3.9 || !strings.Contains(x.Reason, "queue stood empty") {
			t.Errorf("discounted %+v", x)
		}
	}
	if !hasWarning(sr.Warnings, "were not counted as the far end's loss") {
		t.Errorf("warnings %q", sr.Warnings)
	}
}

// TestStallEveryTry: a host that stalls in every trial above 700/s cannot
// test those rates: they count as host-limited, never as the far end's
// loss, so the NDR is below them and flagged as this host's limit, and the
// trials say so.
func TestStallEveryTry(t *testing.T) {
	d := &stallingHost{fakeDevice: fakeDevice{capPPS: 812, queue: 4}, stall: func(_ int, rate float64) bool { return rate > 700 }}
	res := NewResult(result.RFC2544Test{})
	if err := Run(context.Background(), throughputOnly(), d, res); err != nil {
		t.Fatal(err)
	}
	sr := res.Sizes[0]
	if sr.NDRPPS > 700 || sr.NDRPPS < 690 || !sr.NDR.LimitedByHost || !sr.NDR.Confirmed {
		t.Errorf("NDR %.1f (limited by host %v), want 690 to 700, confirmed, and limited by this host", sr.NDRPPS, sr.NDR.LimitedByHost)
	}
	limited := 0
	for _, x := range sr.Discounted {
		if x.RatePPS <= 700 || x.RatePPS > 812 {
			t.Errorf("discounted a trial at %.1f/s", x.RatePPS)
		}
		if x.Then == "host_limited" {
			limited++
		}
	}
	if limited == 0 || !hasWarning(sr.Warnings, "count as ones this host could not test") || !hasWarning(sr.Warnings, "limited by this host") {
		t.Errorf("%d host-limited of %+v; warnings %q", limited, sr.Discounted, sr.Warnings)
	}
	for _, tr := range sr.NDR.TrialLog {
		if tr.RatePPS > 700 && tr.RatePPS <= 812 && tr.Verdict == sweep.VerdictLoss {
			t.Errorf("a stalled trial at %.1f/s counted as the far end's loss", tr.RatePPS)
		}
	}
}

// stallingBursts wraps fakeDevice: the bursts it names lose a frame while
// our sender lags 1 ms behind the line rate's schedule.
type stallingBursts struct {
	fakeDevice
	stall func(n int, frames int64) bool
	n     int
}

func (h *stallingBursts) Trial(ctx context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	o, err := h.fakeDevice.Trial(ctx, s)
	if s.Packets > 0 {
		if h.n++; h.stall(h.n, s.Packets) {
			o.Lost, o.Received, o.MaxLagS = o.Lost+1, o.Received-1, 0.001
		}
	}
	return o, err
}

// TestBurstStall: a burst that lost while our sender stalled is sent
// again, and a clean try decides; one spoiled in every try counts as lost
// and the length is stated as a bound: from the longest burst that went
// at line rate clean to the shortest that lost with no stall.
func TestBurstStall(t *testing.T) {
	cfg := fakeConfig()
	cfg.Sizes, cfg.Tests = []int{1472}, []string{result.RFC2544TestBackToBack}
	d := &stallingBursts{fakeDevice: fakeDevice{capPPS: 812, queue: 4}, stall: func(n int, _ int64) bool { return n%2 == 1 }}
	res := NewResult(result.RFC2544Test{})
	if err := Run(context.Background(), cfg, d, res); err != nil {
		t.Fatal(err)
	}
	sr := res.Sizes[0]
	if sr.BackToBackFrames != 4 || sr.BackToBack.DiscountedBursts == 0 || sr.BackToBack.HostSpoiled {
		t.Errorf("every other burst stalled: %v frames, %d discounted, spoiled %v; want 4, some, false", sr.BackToBackFrames, sr.BackToBack.DiscountedBursts, sr.BackToBack.HostSpoiled)
	}
	d = &stallingBursts{fakeDevice: fakeDevice{capPPS: 812, queue: 4}, stall: func(_ int, frames int64) bool { return frames == 4 }}
	res = NewResult(result.RFC2544Test{})
	if err := Run(context.Background(), cfg, d, res); err != nil {
		t.Fatal(err)
	}
	sr = res.Sizes[0]
	// The 4-frame burst's loss shows nothing; 3 passed at line rate and 8
	// lost with no stall: the far end's 4 lies between, and that is what
	// is said, once.
	bb := sr.BackToBack
	if sr.BackToBackFrames != 3 || !bb.HostSpoiled || bb.Bound != result.RFC2544BoundBetween || bb.AtLeastFrames != 3 || bb.AtMostFrames != 7 ||
		!hasWarning(sr.Warnings, "the bursts that count show 3 to 7 frames") || len(sr.Warnings) != 1 {
		t.Errorf("the 4-frame burst always stalled: %v frames, spoiled %v, bound %s %d-%d, warnings %q; want 3, flagged once, 3 to 7",
			sr.BackToBackFrames, bb.HostSpoiled, bb.Bound, bb.AtLeastFrames, bb.AtMostFrames, sr.Warnings)
	}
}

func hasWarning(ws []string, part string) bool {
	for _, w := range ws {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// TestLossFreeBacklog: an NDR below rates that lost nothing but were
// judged a backlog says so, naming the closest such rate and what the far
// end delivered of it; a backlog that lost, or none, says nothing.
func TestLossFreeBacklog(t *testing.T) {
	trial := func(rate, delivered float64, verdict string, lost int64) result.SweepTrial {
		tr := result.SweepTrial{RatePPS: rate, Verdict: verdict, DeliveredPPS: delivered}
		tr.Lost = lost
		return tr
	}
	ndr := &result.SweepSize{TriedPPS: 13785, TrialLog: []result.SweepTrial{
		trial(148810, 14967, sweep.VerdictLoss, 133296),
		trial(14817, 13943, sweep.VerdictPace, 0),
		trial(13908, 13820, sweep.VerdictPace, 0),
		trial(13785, 13784, sweep.VerdictPass, 0),
	}}
	if w := lossFreeBacklog(ndr); !strings.Contains(w, "13908/s, lost nothing") || !strings.Contains(w, "delivered 13820/s") {
		t.Errorf("loss-free backlog above the NDR: %q", w)
	}
	ndr.TrialLog[1].Lost, ndr.TrialLog[2].Lost = 3, 5
	if w := lossFreeBacklog(ndr); w != "" {
		t.Errorf("backlogs that lost: %q, want nothing", w)
	}
	ndr.TrialLog = ndr.TrialLog[3:]
	if w := lossFreeBacklog(ndr); w != "" {
		t.Errorf("no backlog: %q, want nothing", w)
	}
}
