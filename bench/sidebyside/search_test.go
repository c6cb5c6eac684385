package main

import (
	"strings"
	"testing"
)

// lossAbove is a fake tool that loses datagrams above a rate (and sends
// at most maxSend).
func lossAbove(limit, maxSend float64, calls *[]float64) func(float64) Trial {
	return func(pps float64) Trial {
		*calls = append(*calls, pps)
		sent := min(pps, maxSend)
		t := Trial{SentPPS: sent, RecvPPS: sent, Received: int64(sent)}
		if pps > limit {
			t.Loss, t.RecvPPS = 0.05, limit
		}
		return t
	}
}

func TestSearchConverges(t *testing.T) {
	var calls []float64
	s := SearchLossFree(1000, 20, 0.02, lossAbove(300, 1e9, &calls))
	if s.Bound != "converged" {
		t.Fatalf("stopped: %s after %v", s.Bound, calls)
	}
	if s.BestOffered > 300 || s.BestOffered < 300*0.98 {
		t.Errorf("best offered %v, want within 2 %% below 300 (trials %v)", s.BestOffered, calls)
	}
	if s.BestPPS != s.BestOffered {
		t.Errorf("best rate %v is not the passing trial's received rate %v", s.BestPPS, s.BestOffered)
	}
	// Bisection: first the bound, then halving, then midpoints.
	if calls[0] != 1000 || calls[1] != 500 || calls[2] != 250 || calls[3] != 375 {
		t.Errorf("trials %v, want 1000, 500, 250, 375, ...", calls)
	}
	if len(s.Trials) != len(calls) {
		t.Errorf("%d trials recorded, %d run", len(s.Trials), len(calls))
	}
}

func TestSearchUpperBoundPasses(t *testing.T) {
	var calls []float64
	s := SearchLossFree(1000, 20, 0.02, lossAbove(5000, 1e9, &calls))
	if len(calls) != 1 || s.BestPPS != 1000 || s.Bound != "upper bound passed" {
		t.Errorf("trials %v, best %v, stopped %q; want one trial at the bound", calls, s.BestPPS, s.Bound)
	}
}

func TestSearchTrialLimit(t *testing.T) {
	var calls []float64
	s := SearchLossFree(1000, 4, 0.001, lossAbove(300, 1e9, &calls))
	if len(calls) != 4 || !strings.HasPrefix(s.Bound, "trial limit") || s.BestOffered != 250 {
		t.Errorf("trials %v, best %v, stopped %q; want 4 trials, 250 the best", calls, s.BestOffered, s.Bound)
	}
}

// A sender that cannot send what it is offered does not pass, even
// without loss: it did not test that rate.
func TestSearchSenderBehind(t *testing.T) {
	var calls []float64
	s := SearchLossFree(1000, 20, 0.02, lossAbove(5000, 400, &calls))
	if s.BestOffered > 400/OfferedShare || s.BestOffered < 400*0.98 {
		t.Errorf("best offered %v with a sender capped at 400/s (trials %v)", s.BestOffered, calls)
	}
}

func TestSearchNothingPasses(t *testing.T) {
	var calls []float64
	s := SearchLossFree(1000, 6, 0.02, lossAbove(0, 1e9, &calls))
	if s.BestPPS != 0 || len(calls) != 6 {
		t.Errorf("best %v after %v, want 0 after 6 trials", s.BestPPS, calls)
	}
	if s := SearchLossFree(0, 6, 0.02, lossAbove(0, 1e9, &calls)); len(s.Trials) != 0 || s.Bound == "" {
		t.Errorf("no upper bound: %+v", s)
	}
}

func TestTrialPassed(t *testing.T) {
	ok := Trial{OfferedPPS: 100, SentPPS: 100, Received: 100, Loss: LossLimit}
	if !ok.Passed() {
		t.Error("0.1 % loss failed")
	}
	for _, bad := range []Trial{
		{OfferedPPS: 100, SentPPS: 100, Received: 100, Loss: LossLimit * 1.01},
		{OfferedPPS: 100, SentPPS: 94, Received: 94},
		{OfferedPPS: 100, SentPPS: 100, Received: 0},
		{OfferedPPS: 100, SentPPS: 100, Received: 100, Error: "iperf3: server busy"},
	} {
		if bad.Passed() {
			t.Errorf("%+v passed", bad)
		}
	}
}

func TestRatios(t *testing.T) {
	m := map[string]float64{Wirebench: 300, Iperf2: 100, Iperf3: 150}
	if r := ratio(m, func(v float64) float64 { return v }); r != 2 {
		t.Errorf("ratio %v, want 300/150", r)
	}
	if r := lowRatio(m); r != 3 {
		t.Errorf("low ratio %v, want 300/100", r)
	}
	if r := lowRatio(map[string]float64{Wirebench: 1, Iperf2: 0}); r != 0 {
		t.Errorf("low ratio without a peer figure %v, want 0", r)
	}
	if median([]float64{3, 1, 2}) != 2 || median([]float64{4, 1, 2, 3}) != 2.5 || median(nil) != 0 {
		t.Error("median")
	}
}

func TestUnits(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{pps(0), "-"}, {pps(950), "950"}, {pps(292_400), "292 k"}, {pps(1_488_095), "1.49 M"}, {pps(10_000_000), "10 M"},
		{rateText(1e5), "100 kbit/s"}, {rateText(99.9e6), "99.9 Mbit/s"}, {rateText(1e9), "1 Gbit/s"}, {rateText(-1), "-"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
