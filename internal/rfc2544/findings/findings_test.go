package findings

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// burst is a burst sent at share of a line rate of 1000/s.
func burst(frames int64, share float64, lost int64, discounted bool) result.RFC2544Burst {
	return result.RFC2544Burst{Frames: frames, OfferedPPS: 1000 * share, Lost: lost, Discounted: discounted}
}

// TestBurstBound: a search this host's sending qualified says one thing,
// from the bursts that count only: a pass below line rate and a loss in our
// stall show nothing.
func TestBurstBound(t *testing.T) {
	for _, c := range []struct {
		name       string
		bb         result.RFC2544BackToBack
		want       string
		atLeast    int64
		atMost     int64
		cell, line string
	}{
		{"no doubt: the figure stands", result.RFC2544BackToBack{AtLineRate: true, Searches: []result.RFC2544BurstSearch{{Frames: 12}}},
			result.RFC2544BoundExact, 0, 0, "12", "12000.0"},
		// 16 went slowly and passed; 32 lost in our stall three times:
		// neither counts, and nothing else was sent: no bound at all
		// (before, this size said both "an upper bound" and "a lower
		// bound" of 16).
		{"slow pass and spoiled loss, nothing else", result.RFC2544BackToBack{AtLineRate: false, HostSpoiled: true, Searches: []result.RFC2544BurstSearch{{Frames: 16, Bursts: []result.RFC2544Burst{
			burst(16, 0.08, 0, false), burst(16, 0.08, 0, false), burst(16, 0.08, 0, false),
			burst(32, 0.5, 9, true), burst(32, 0.5, 9, true), burst(32, 0.5, 9, true)}}}},
			result.RFC2544BoundNotMeasured, 0, 0, "not measured", "-"},
		// The same with a clean 8 at line rate and a 40 that lost
		// without a stall: between the two.
		{"slow pass and spoiled loss, a bracket", result.RFC2544BackToBack{AtLineRate: false, HostSpoiled: true, Searches: []result.RFC2544BurstSearch{{Frames: 16, Bursts: []result.RFC2544Burst{
			burst(8, 1, 0, false), burst(16, 0.08, 0, false), burst(40, 0.3, 5, false), burst(32, 0.5, 9, true)}}}},
			result.RFC2544BoundBetween, 8, 39, "8-39", "8000.0-39000.0"},
		{"slow passes only: at most", result.RFC2544BackToBack{AtLineRate: false, Searches: []result.RFC2544BurstSearch{{Frames: 47, Bursts: []result.RFC2544Burst{
			burst(16, 0.08, 0, false), burst(32, 0.08, 0, false), burst(64, 0.1, 7, false), burst(48, 0.1, 2, false), burst(47, 0.08, 0, false)}}}},
			result.RFC2544BoundAtMost, 0, 47, "<=47", "<=47000.0"},
		{"spoiled loss only: at least", result.RFC2544BackToBack{AtLineRate: true, HostSpoiled: true, Searches: []result.RFC2544BurstSearch{{Frames: 12, Bursts: []result.RFC2544Burst{
			burst(12, 1, 0, false), burst(13, 1, 3, true), burst(13, 1, 3, true), burst(13, 1, 3, true)}}}},
			result.RFC2544BoundAtLeast, 12, 0, ">=12", ">=12000.0"},
		// Two searches whose bursts that count disagree: no bound stands.
		{"the bursts that count disagree", result.RFC2544BackToBack{AtLineRate: false, Searches: []result.RFC2544BurstSearch{
			{Frames: 20, Bursts: []result.RFC2544Burst{burst(20, 1, 0, false)}}, {Frames: 9, Bursts: []result.RFC2544Burst{burst(10, 0.5, 1, false), burst(9, 0.2, 0, false)}}}},
			result.RFC2544BoundNotMeasured, 0, 0, "not measured", "-"},
	} {
		b := BurstBound(&c.bb, 1000)
		if b.Bound != c.want || b.AtLeastFrames != c.atLeast || b.AtMostFrames != c.atMost {
			t.Errorf("%s: %s %d-%d, want %s %d-%d", c.name, b.Bound, b.AtLeastFrames, b.AtMostFrames, c.want, c.atLeast, c.atMost)
		}
		sr := result.RFC2544Size{Size: 82, LinePPS: 1000, BackToBack: &c.bb, BackToBackFrames: 12, BackToBackUS: 12000}
		if cell, line, _ := Cell(sr, ">=", "<=", "-"); cell != c.cell || line != c.line {
			t.Errorf("%s: cells %q %q, want %q %q", c.name, cell, line, c.cell, c.line)
		}
		c.bb.Bound, c.bb.AtLeastFrames, c.bb.AtMostFrames = b.Bound, b.AtLeastFrames, b.AtMostFrames
		w := BurstWords(&c.bb, 3, 100000)
		if (w == "") != (c.want == result.RFC2544BoundExact) || strings.Contains(w, "upper bound") && strings.Contains(w, "lower bound") {
			t.Errorf("%s: words %q", c.name, w)
		}
	}
}

// TestOneLinePerCause: a cause at several sizes is one line with its
// count; the sizes' own words are its detail; the run's list, which holds
// each size's warnings prefixed with the size, adds nothing of its own but
// what is the run's.
func TestOneLinePerCause(t *testing.T) {
	sz := func(size int, ws ...string) result.RFC2544Size {
		return result.RFC2544Size{Size: size, Done: []string{result.RFC2544TestThroughput, result.RFC2544TestLatency}, Warnings: ws,
			DiscountedTrials: 2, Discounted: []result.RFC2544Discounted{{Search: "NDR", Then: "run_again"}, {Search: "NDR", Then: "host_limited"}}}
	}
	r := &result.RFC2544{Sizes: []result.RFC2544Size{
		sz(18, "throughput: 2 trials lost datagrams while this host spoiled them", "latency at 90 % of NDR: 12 of 700 datagrams were lost"),
		sz(82, "throughput: 2 trials lost datagrams while this host spoiled them", "latency at 50 % of NDR: 3 of 80 datagrams were lost"),
	}}
	r.Warnings = []string{"18 B: latency at 90 % of NDR: 12 of 700 datagrams were lost", "the store failed"}
	fs := Of(r)
	if len(fs) != 2 || fs[0].Cause != CauseStalls || fs[1].Test != result.RFC2544TestLatency {
		t.Fatalf("findings %+v", fs)
	}
	if !strings.HasPrefix(fs[0].Text, "host stalls spoiled 4 throughput trials over 2 sizes (18 and 82 B)") || !strings.Contains(fs[0].Text, "at 2 rates every try was spoiled") {
		t.Errorf("stalls: %q", fs[0].Text)
	}
	if len(fs[0].Detail) != 6 || len(fs[1].Detail) != 2 || !strings.Contains(fs[1].Text, "the same 2 times in all, at 18 and 82 B") {
		t.Errorf("detail %q / %q, text %q", fs[0].Detail, fs[1].Detail, fs[1].Text)
	}
	if got := RunWarnings(r, fs); len(got) != 1 || got[0] != "the store failed" {
		t.Errorf("run warnings %q", got)
	}
}

// TestDecidedStallsAreANote: throughput trials this host's stalls spoiled,
// each run again until a clean run decided, leave the figures as they are:
// that is a note, not a warning (nor among the document's warnings); one
// rate spoiled in every try makes it a warning that says so, with the
// advice.
func TestDecidedStallsAreANote(t *testing.T) {
	doc := func(then ...string) *result.RFC2544 {
		var ds []result.RFC2544Discounted
		for _, th := range then {
			ds = append(ds, result.RFC2544Discounted{Search: "NDR", Then: th})
		}
		return &result.RFC2544{Sizes: []result.RFC2544Size{{Size: 1472, Done: []string{result.RFC2544TestThroughput},
			DiscountedTrials: len(ds), Discounted: ds}}}
	}
	fs := Of(doc("run_again", "run_again"))
	if len(fs) != 1 || !fs[0].Note || fs[0].Label() != "note" || !strings.Contains(fs[0].Text, "a clean run decided, so the figures stand") ||
		strings.Contains(fs[0].Text, "quieter host") || len(Texts(fs)) != 0 {
		t.Errorf("decided: %+v, texts %q", fs, Texts(fs))
	}
	fs = Of(doc("run_again", "host_limited"))
	if len(fs) != 1 || fs[0].Note || fs[0].Label() != "warning" || !strings.Contains(fs[0].Text, "a quieter host tests them") || len(Texts(fs)) != 1 {
		t.Errorf("one rate spoiled in every try: %+v", fs)
	}
	fs = Of(doc("search_ended"))
	if len(fs) != 1 || fs[0].Note {
		t.Errorf("a search that ended on a spoiled trial: %+v", fs)
	}
}
