package findings

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// trial is one search trial of a size's log.
func trial(rate, secs float64, verdict string) result.SweepTrial {
	return result.SweepTrial{Repeat: 1, RatePPS: rate, TrialS: secs, Verdict: verdict}
}

// TestDecidedStallsAreANote: a sweep whose trials this host's stalls
// spoiled, each run again at its rate and length until a clean run
// decided, says so as a note (the figures stand); a spoiled trial nothing
// decided (the search ended on it, or the rate stalled in every try and
// counts as untested) keeps the warning and its advice.
func TestDecidedStallsAreANote(t *testing.T) {
	sweep := func(logs ...[]result.SweepTrial) *result.Sweep {
		r := &result.Sweep{}
		for i, l := range logs {
			r.Sizes = append(r.Sizes, result.SweepSize{Size: 466 + 512*i, RatePPS: 800, Found: true, Confirmed: true, TrialLog: l})
		}
		return r
	}
	for _, c := range []struct {
		name string
		r    *result.Sweep
		note bool
	}{
		{"each re-run decided", sweep(
			[]result.SweepTrial{trial(1000, 1, "pass"), trial(1000, 10, "host_stalled"), trial(1000, 10, "pass")},
			[]result.SweepTrial{trial(900, 10, "host_stalled"), trial(900, 10, "host_stalled"), trial(900, 10, "loss"), trial(850, 10, "pass")}), true},
		{"the search ended on one", sweep([]result.SweepTrial{trial(1000, 1, "pass"), trial(1000, 10, "host_stalled")}), false},
		{"a re-run of another length", sweep([]result.SweepTrial{trial(1000, 10, "host_stalled"), trial(1000, 3.16, "pass")}), false},
		{"a trial not sent at its rate", sweep([]result.SweepTrial{trial(1000, 10, "host_stalled"), trial(1000, 10, "pass"), trial(2000, 1, "host_limited")}), false},
		{"not sent at a rate above one the far end failed", sweep([]result.SweepTrial{trial(20000, 1, "host_limited"), trial(10000, 1, "loss"), trial(1000, 10, "host_stalled"), trial(1000, 10, "pass")}), true},
		{"stalled in every try above one the far end failed", sweep([]result.SweepTrial{trial(1100, 1, "backlog"), trial(1200, 10, "host_stalled"), trial(1200, 10, "host_stalled"), trial(1000, 10, "pass")}), true},
	} {
		fs := Of(c.r)
		if len(fs) != 1 || fs[0].Cause != CauseSpoiled || fs[0].Note != c.note {
			t.Errorf("%s: %+v, want one finding, a note: %v", c.name, fs, c.note)
			continue
		}
		if !c.note && c.name == "a trial not sent at its rate" && !strings.Contains(fs[0].Text, "1 was not sent") {
			t.Errorf("%s: %q, want \"1 was not sent\"", c.name, fs[0].Text)
		}
		if c.note != strings.Contains(fs[0].Text, "so the figures stand") || c.note == strings.Contains(fs[0].Text, "a quieter host tests them") ||
			(fs[0].Label() == "note") != c.note {
			t.Errorf("%s: %s: %q", c.name, fs[0].Label(), fs[0].Text)
		}
	}
}

// TestLocalReceiverOverflowIsOneFinding: trials whose receiver, on this
// host, overflowed its socket are one finding, with the trials, the sizes
// and the loss, before the "no rate passed" they explain.
func TestLocalReceiverOverflowIsOneFinding(t *testing.T) {
	over := func(rate float64, lost int64) result.SweepTrial {
		tr := trial(rate, 1, "loss")
		tr.Lost = lost
		tr.Warnings = []string{LocalReceiverWords + " 12 times during the test (RcvbufErrors, host-wide): …"}
		return tr
	}
	r := &result.Sweep{Sizes: []result.SweepSize{
		{Size: 512, TrialLog: []result.SweepTrial{over(2000, 12), over(1900, 7)}, Warnings: []string{"no rate passed"}},
		{Size: 1470, TrialLog: []result.SweepTrial{over(800, 3), trial(700, 1, "loss")}, Warnings: []string{"no rate passed"}},
	}}
	fs := Of(r)
	if len(fs) < 2 || fs[0].Cause != CauseLocalRecv || fs[1].Cause != CauseNone {
		t.Fatalf("findings %+v: want the receiver's overflow first, then no rate passed", fs)
	}
	// No sum of the trials' loss: the host-wide counter bounds each
	// trial's apart; each trial's count is in the detail.
	for _, want := range []string{"overflowed in 3 trials at 2 sizes (512, 1470 B)", "each trial's count with -V", "larger buffer"} {
		if !strings.Contains(fs[0].Text, want) {
			t.Errorf("%q lacks %q", fs[0].Text, want)
		}
	}
	if strings.Contains(fs[0].Text, "22") {
		t.Errorf("%q sums the trials' loss (22), which the counter does not bound", fs[0].Text)
	}
	if len(fs[0].Detail) != 3 || !strings.HasPrefix(fs[0].Detail[0], "512 B: a trial at 2000/s: "+LocalReceiverWords+" 12 times") {
		t.Errorf("detail %q: want a line per trial with its count", fs[0].Detail)
	}
}
