package htmlreport

import (
	"fmt"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// A tradeoff (-r) test's reverse flow starts when the forward test ends:
// on the cell's own time axis it runs from 0 for the test's duration,
// its intervals of the forward test's time (0 bytes) left out; the
// forward flow keeps its times, clipped at its end.
func TestTradeoffReverseFlowOnItsOwnTimeAxis(t *testing.T) {
	tr := &result.Result{Test: result.Test{Duration: 2, Mode: "tradeoff"}}
	ivs := []result.Interval{
		{Start: 0, End: 1, Flow: "forward", BitsPerSecond: 90e6}, {Start: 0, End: 1, Flow: "reverse"},
		{Start: 1, End: 2, Flow: "forward", BitsPerSecond: 91e6}, {Start: 1, End: 2, Flow: "reverse"},
		{Start: 2, End: 3, Flow: "forward"}, {Start: 2, End: 3, Flow: "reverse", BitsPerSecond: 94e6},
		{Start: 3, End: 4.3, Flow: "reverse", BitsPerSecond: 95e6},
	}
	got := fmt.Sprint(spans(ownTimeAxis(tr, ivs)))
	want := "[forward 0-1 90 forward 1-2 91 reverse 0-1 94 reverse 1-2 95]"
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// Any other mode: one clock, clipped at the test's end.
	tr.Test.Mode = "reverse"
	if got := fmt.Sprint(spans(ownTimeAxis(tr, ivs))); got != "[forward 0-1 90 reverse 0-1 0 forward 1-2 91 reverse 1-2 0]" {
		t.Errorf("not a tradeoff test: %s", got)
	}
}

func spans(ivs []result.Interval) []string {
	var out []string
	for _, in := range ivs {
		out = append(out, fmt.Sprintf("%s %g-%g %g", in.Flow, in.Start, in.End, in.BitsPerSecond/1e6))
	}
	return out
}

// The frame rate chart: each size's NDR and PDR as a share of its line
// rate in frames/s, the medium's line at 100 %; a size without an NDR
// has no NDR point.
func TestRFC2544FrameRateAgainstTheMedium(t *testing.T) {
	_, v := handRFCView(t)
	ss := rfcFrameRateSeries(v)
	if len(ss) != 3 || ss[2].role != "line" || !ss[2].dash || ss[2].name != "medium's frame rate (eth100)" {
		t.Fatalf("series %+v", ss)
	}
	// 64 B: NDR 5000 of 148809 frames/s; 1518 B: 6000 of 8000.
	if got := fmt.Sprintf("%.4f", ss[0].xys); got != "[{64.0000 3.3600} {1518.0000 75.0000}]" {
		t.Errorf("NDR points %s", got)
	}
	if got := fmt.Sprintf("%.1f", ss[2].xys); got != "[{64.0 100.0} {1518.0 100.0}]" {
		t.Errorf("line points %s", got)
	}
}
