package compare

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestBackToBackBoundCompared: the recorded RFC 2544 run's 64 B
// back-to-back search went at 8 % of line rate, so its 503 frames are no
// result (the bursts that count show 32-503). compare compared 503 as a
// figure; it now shows the bound (≥/≤) in the A or B cell, computes no
// ratio or difference, and judges only what the bounds tell.
func TestBackToBackBoundCompared(t *testing.T) {
	raw, err := os.ReadFile("../report/htmlreport/testdata/rfc2544.json")
	if err != nil {
		t.Fatal(err)
	}
	_, ms, err := Metrics(raw)
	if err != nil {
		t.Fatal(err)
	}
	var bound Metric
	for _, m := range ms {
		if m.Name == "back_to_back_frames@64" {
			bound = m
		}
	}
	if bound.Bound != "32-503" || bound.AtLeast != 32 || bound.AtMost != 503 {
		t.Fatalf("64 B's back-to-back metric: %+v, want the bound 32-503", bound)
	}
	exact := func(v float64) []Metric {
		return []Metric{{Name: "back_to_back_frames@64", Unit: "frames", Value: v, HigherIsBetter: true}}
	}
	for _, tc := range []struct {
		a, b    []Metric
		verdict string
	}{
		{exact(20), []Metric{bound}, Better},
		{exact(600), []Metric{bound}, Worse},
		{exact(100), []Metric{bound}, Unclear},
		{[]Metric{bound}, exact(503), Unclear},
	} {
		diffs, _, _ := Pair(tc.a, tc.b)
		if len(diffs) != 1 {
			t.Fatalf("diffs %+v", diffs)
		}
		d := diffs[0]
		if got := Judge(d, 0.05); got != tc.verdict || d.Ratio != nil || d.Bounded == "" {
			t.Errorf("%v vs %v: %s (ratio %v, %q), want %s", tc.a[0].Value, tc.b[0].Bound, got, d.Ratio, d.Bounded, tc.verdict)
		}
	}
	diffs, _, _ := Pair(exact(40), []Metric{bound})
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	doc := &Doc{Kind: Kind, Baseline: DocRun{ID: 1, Kind: "rfc2544", StartedAt: at}, Runs: []DocRun{{ID: 2, Kind: "rfc2544", StartedAt: at}}}
	NameRuns(doc)
	doc.Comparisons = []Comparison{{Run: 2, Metrics: diffs}}
	below := 0.9
	doc.Verdict = &Verdict{Metric: "back_to_back_frames@64", FailBelow: &below, Passed: true}
	doc.Verdict.Judge(doc.Comparisons[0])
	var b strings.Builder
	if err := WriteText(&b, doc); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"  back_to_back_frames@64  40  32–503 (bound)  —",
		"B's figure is a bound, not a result", "verdict: FAIL", "back_to_back_frames@64: B's figure is a bound"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	js, _ := json.Marshal(doc)
	if !strings.Contains(string(js), `"b_bound":"32-503"`) {
		t.Errorf("JSON lacks the bound: %s", js)
	}
}
