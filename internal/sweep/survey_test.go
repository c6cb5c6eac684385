package sweep_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/testutil/trialtrace"
)

// packer is a device on a fake clock that forwards 5000 receive buffers of
// 2524 bytes a second, packed with datagrams (the modem of the size
// sweep: 10,000/s up to 1262 B, 5,000/s from 1263 B), each trial taking
// its length and 0.3 s around it.
type packer struct {
	now    time.Duration
	trials []sweep.Spec
}

func (d *packer) Trial(_ context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	d.trials = append(d.trials, s)
	d.now += s.Duration + 300*time.Millisecond
	secs := s.Duration.Seconds()
	sent := int64(math.Round(s.RatePPS * secs))
	got := sent
	if c := 5000 * math.Floor(2524/float64(s.Size)); s.RatePPS > c {
		got = int64(math.Floor(c * secs))
	}
	return result.SweepOutcome{Sent: sent, OfferedPPS: s.RatePPS, Received: got, Lost: sent - got, Total: sent,
		SendSeconds: secs, ReceiveSeconds: secs, BacklogKnown: true}, nil
}

// TestSurveyShowsTheCliffFirst: a sweep runs every planned size's first
// trial (the highest rate, a search trial long) before any search, each
// search uses it as its own first trial (none is run twice), and the
// cliff between the last two sizes, whose bisection is most of the run,
// is in the time left from the survey on: no estimate rises more than 2×,
// and from a quarter of the way in at least 90 % are within 35 % of the
// time really left. Without the survey the cliff showed only when 1300
// B's search began, 70 % of the way through the sizes asked for: the
// estimate after the survey's place read a third of what was left, and
// 72 % were within the bound.
func TestSurveyShowsTheCliffFirst(t *testing.T) {
	d := &packer{}
	base := time.Unix(1000, 0)
	sizes := []int{400, 600, 800, 1000, 1200, 1300}
	top := func(int) float64 { return 20000 }
	cfg := sweep.Config{Sizes: sizes, MaxPPS: top, Trial: time.Second, Confirm: 10 * time.Second,
		Now:   func() time.Time { return base.Add(d.now) },
		Sleep: func(context.Context, time.Duration) error { d.now += 50 * time.Millisecond; return nil }}
	var ps []trialtrace.Point
	var surveyed []int
	var lines []string
	cfg.OnTrial = func(p sweep.Progress) {
		if p.Survey {
			surveyed = append(surveyed, p.Size)
		}
		ps = append(ps, trialtrace.Point{Elapsed: d.now, Estimate: p.Left})
		lines = append(lines, p.Line())
	}
	res := sweep.NewResult(result.SweepTest{})
	if err := sweep.Run(context.Background(), cfg, d, res); err != nil {
		t.Fatal(err)
	}
	for i, z := range sizes {
		if want := (sweep.Spec{Size: z, RatePPS: 20000, Duration: time.Second}); d.trials[i] != want {
			t.Errorf("trial %d: %+v, want the survey's %+v", i+1, d.trials[i], want)
		}
	}
	if len(surveyed) != len(sizes) {
		t.Errorf("survey progress lines for %v, want %v", surveyed, sizes)
	}
	if want := "sweep: 400 B, survey trial at 20000/s: pass"; !strings.HasPrefix(lines[0], want) {
		t.Errorf("the first progress line %q, want it to start %q", lines[0], want)
	}
	for _, l := range lines[len(sizes):] {
		if strings.Contains(l, "trial 1 at") && !strings.Contains(l, "bisecting") {
			t.Errorf("a search's first trial is told again: %q (the survey told it)", l)
		}
	}
	seen := map[sweep.Spec]int{}
	for _, s := range d.trials {
		if seen[s]++; seen[s] > 1 && s.Duration == time.Second && s.RatePPS == 20000 {
			t.Errorf("%d B's first trial ran twice: the search did not use the survey's", s.Size)
		}
	}
	for _, sr := range res.Sizes {
		if len(sr.TrialLog) == 0 || sr.TrialLog[0].RatePPS != 20000 && !sr.Bisected {
			t.Errorf("%d B: its search's log does not start with the survey's trial", sr.Size)
		}
	}
	if len(res.Cliffs) != 1 || res.Cliffs[0].Below != 1262 || res.Cliffs[0].Above != 1263 {
		t.Fatalf("cliffs %+v, want 1262 → 1263 B", res.Cliffs)
	}
	total := d.now
	for i := range ps {
		ps[i].Actual = total - ps[i].Elapsed
	}
	// The survey's last update already counts the cliff's bisection.
	if p := ps[len(sizes)-1]; float64(p.Estimate) < 0.65*float64(p.Actual) {
		t.Errorf("after the survey: estimated %v left, really %v: the cliff it showed is not counted", p.Estimate, p.Actual)
	}
	v := trialtrace.Check(ps, total, 0.25, 0.35, 2)
	for _, b := range v.Rises {
		t.Error(b)
	}
	for _, b := range v.Misses {
		t.Log("off: " + b)
	}
	// Not every estimate: a bisection's last steps are one size more or
	// fewer as the step lies (a cliff in 3 bytes takes 1 size when it
	// lies under the middle one, 2 otherwise), and the estimate counts
	// their mean.
	t.Logf("within 35 %% from a quarter in: %.0f %% of %d estimates", 100*v.Within(), v.Judged)
	if v.Within() < 0.9 {
		t.Errorf("%.0f %% of the estimates within 35 %% of the time left, want at least 90 %%", 100*v.Within())
	}
	if t.Failed() {
		for i, p := range ps {
			t.Logf("at %6.1fs: estimated %6.1fs left, really %6.1fs: %s", p.Elapsed.Seconds(), p.Estimate.Seconds(), p.Actual.Seconds(), lines[i])
		}
	}
}
