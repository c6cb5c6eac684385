package compare

import (
	"strings"
	"testing"
)

// The thresholds read "95%" and "95" alike; anything else names the flag.
func TestOptionsVerdict(t *testing.T) {
	v, err := Options{Metric: "jitter_ms", FailBelow: "95%", FailAbove: " 120 "}.Verdict()
	if err != nil || v == nil || *v.FailBelow != 0.95 || *v.FailAbove != 1.2 || v.Metric != "jitter_ms" || !v.Passed {
		t.Fatalf("Verdict() = %+v, %v", v, err)
	}
	if v, err := (Options{Metric: "x"}).Verdict(); v != nil || err != nil {
		t.Fatalf("no threshold: %+v, %v", v, err)
	}
	for _, bad := range []string{"abc", "0", "-5%", "NaN"} {
		_, err := Options{FailAbove: bad}.Verdict()
		if err == nil || !strings.Contains(err.Error(), "--fail-above") {
			t.Errorf("--fail-above %q: %v", bad, err)
		}
	}
}

// A baseline and a run are set side by side, with the run's own
// warnings carried over and the verdict judged.
func TestBuilder(t *testing.T) {
	doc := func(bps string, warn string) []byte {
		return []byte(`{"schema":"wirebench/1","kind":"test","role":"client","test":{"protocol":"tcp","direction":"send"},` +
			`"intervals":[],"sender":{"bits_per_second":` + bps + `},"warnings":[` + warn + `]}`)
	}
	b, err := NewBuilder(Options{FailBelow: "95%"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add(Input{Selector: "1", ID: 1, Kind: "test", Result: doc("100", "")}); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(Input{Selector: "link=usb", ID: 2, Kind: "test", Result: doc("90", `"odd"`), Ambiguous: true}); err != nil {
		t.Fatal(err)
	}
	d, err := b.Doc()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Comparisons) != 1 || d.Comparisons[0].Ratio["throughput"] != 0.9 || d.Verdict == nil || d.Verdict.Passed {
		t.Fatalf("comparisons %+v verdict %+v", d.Comparisons, d.Verdict)
	}
	if len(d.Warnings) != 2 || d.Warnings[0] != "run 2: odd" || !strings.Contains(d.Warnings[1], "matches more than one run") {
		t.Fatalf("warnings %q", d.Warnings)
	}
	if err := b.Add(Input{ID: 3, Result: []byte(`{"kind":"nonsense"}`)}); err == nil || !strings.Contains(err.Error(), "run 3") {
		t.Fatalf("a kind compare does not know: %v", err)
	}
}
