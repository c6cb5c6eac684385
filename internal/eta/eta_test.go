package eta

import (
	"math"
	"testing"
	"time"
)

func TestBisect(t *testing.T) {
	for _, c := range []struct {
		lo, hi, res, want float64
	}{
		{1000, 1010, 0.01, 0},        // already within 1 %
		{1000, 1020, 0.01, 1},        // one halving: 1000..1010
		{500, 1000, 0.01, 7},         // ln 2 / ln 1.01 = 69.7 steps of 1 %: 2^7 = 128 ≥ 69.7 > 64
		{0, 1000, 0.01, 0},           // no pass yet: not a bisection
		{1000, math.Inf(1), 0.01, 0}, // no failure yet: not a bisection
		{1000, 1000 * 1.01 * 1.01, 0.01, 1},
	} {
		if got := Bisect(c.lo, c.hi, c.res); got != c.want {
			t.Errorf("Bisect(%v, %v, %v) = %v, want %v", c.lo, c.hi, c.res, got, c.want)
		}
	}
	for _, c := range []struct {
		lo, hi int64
		want   float64
	}{{0, 1, 0}, {16, 32, 4}, {16, 33, 5}, {0, 100001, 17}} {
		if got := BisectInt(c.lo, c.hi); got != c.want {
			t.Errorf("BisectInt(%d, %d) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}

// TestCostLearned: trials of 1 s that take 1.5 s from one end to the next
// cost 0.5 s of overhead each; a class without trials of its own takes
// every trial's overhead; a re-run adds its class's share of time.
func TestCostLearned(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := New(t0)
	now := t0
	for range 4 {
		now = now.Add(1500 * time.Millisecond)
		e.Trial("search", now, time.Second, false)
	}
	if got, want := e.Raw(Work{Trials("search", 10, time.Second)}), 15*time.Second; got != want {
		t.Errorf("10 search trials of 1 s: %v, want %v", got, want)
	}
	if got, want := e.Raw(Work{Trials("loss", 2, 2*time.Second)}), 5*time.Second; got != want {
		t.Errorf("2 loss trials of 2 s at the search's overhead: %v, want %v", got, want)
	}
	now = now.Add(1500 * time.Millisecond)
	e.Trial("search", now, time.Second, true) // 1.5 s of 7.5 s a re-run: × 7.5/6
	if got, want := e.Raw(Work{Trials("search", 8, time.Second)}), 15*time.Second; got != want {
		t.Errorf("8 search trials with a quarter more re-run: %v, want %v", got, want)
	}
}

// TestRerunShareByClass: the re-runs' share is its class's time, not the
// run's: bursts sent again do not draw out the searches, and a class
// without trials of its own takes every trial's share.
func TestRerunShareByClass(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := New(t0)
	now := t0
	for range 2 {
		now = now.Add(time.Second)
		e.Trial("search", now, time.Second, false)
	}
	for i := range 4 {
		now = now.Add(time.Second)
		e.Trial("burst", now, time.Second, i%2 == 1) // half re-runs: × 2
	}
	if got, want := e.Raw(Work{Trials("search", 3, time.Second)}), 3*time.Second; got != want {
		t.Errorf("3 search trials of 1 s, no re-run of a search: %v, want %v", got, want)
	}
	if got, want := e.Raw(Work{Trials("burst", 3, time.Second)}), 6*time.Second; got != want {
		t.Errorf("3 bursts of 1 s, half of their time re-runs: %v, want %v", got, want)
	}
	if got, want := e.Raw(Work{Trials("loss", 3, time.Second)}), 4500*time.Millisecond; got != want {
		t.Errorf("3 loss trials of 1 s, a third of every trial's time re-runs: %v, want %v", got, want)
	}
}

// TestUnits: a unit's expectation is the recency-weighted mean of those
// closed (unitWeight on the latest), re-runs left out (their class's share
// adds them), its prior before; Rest is the expectation less what the
// unit under way has done, never below its floor.
func TestUnits(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := New(t0)
	prior := Part{Trials: 9, Nominal: 18 * time.Second}
	if got := e.Expect("ndr", "search", prior); got.Trials != 9 || got.Nominal != 18*time.Second || got.Class != "search" {
		t.Errorf("prior: %+v", got)
	}
	for i, n := range []int{6, 10} {
		for k := range n {
			e.Trial("search", t0.Add(time.Duration(i*100+k)*time.Second), time.Second, false)
		}
		e.Trial("search", t0.Add(time.Duration(i*100+n)*time.Second), time.Second, true)
		e.Unit("ndr")
	}
	// 6 and then 10 trials (a re-run each left out): 0.85 × 10 + 0.15 × 6 = 9.4.
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	if got := e.Expect("ndr", "search", prior); !near(got.Trials, 9.4) || !near(got.Nominal.Seconds(), 9.4) {
		t.Errorf("weighted mean of 6 and then 10 trials of 1 s and a re-run each: %+v, want 9.4 trials of 9.4 s", got)
	}
	for k := range 5 {
		e.Trial("search", t0.Add(time.Duration(300+k)*time.Second), time.Second, false)
	}
	if got := e.Rest("ndr", "search", prior, Part{Trials: 1, Nominal: 10 * time.Second}); !near(got.Trials, 4.4) || got.Nominal != 10*time.Second {
		t.Errorf("9.4 expected, 5 done, a 10 s confirmation certain: %+v, want 4.4 trials and 10 s", got)
	}
}

// TestNeverRisesTwofold: the estimate rises at most 2× per update, falls
// at once, and a zero (nothing left, for now) does not reset the bound.
func TestNeverRisesTwofold(t *testing.T) {
	e := New(time.Unix(0, 0))
	seq := []struct{ work, want time.Duration }{
		{100 * time.Second, 100 * time.Second},
		{500 * time.Second, 200 * time.Second},
		{500 * time.Second, 400 * time.Second},
		{500 * time.Second, 500 * time.Second},
		{10 * time.Second, 10 * time.Second},
		{0, 0},
		{300 * time.Second, 20 * time.Second},
	}
	for i, s := range seq {
		if got := e.Left(Work{{Class: "x", Nominal: s.work}}); got != s.want {
			t.Errorf("update %d: work of %v shows %v, want %v", i+1, s.work, got, s.want)
		}
	}
}

// TestUnitWithoutReruns: a unit drawn out by a host's re-runs is learned
// without them; what a unit takes gets its class's share of re-runs on
// top, as the structure's parts do.
func TestUnitWithoutReruns(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := New(t0)
	e.Trial("search", t0.Add(time.Second), time.Second, false)
	e.Trial("search", t0.Add(2*time.Second), time.Second, true) // half were re-runs: × 2
	e.Unit("search")
	if got := e.Expect("search", "search", Part{Trials: 9}); got.Trials != 1 || got.Nominal != time.Second {
		t.Errorf("a unit of a trial and its re-run: %+v, want the 1 trial of 1 s", got)
	}
	structure := e.Raw(Work{Trials("search", 3, time.Second)})
	measured := e.Raw(Work{e.Expect("search", "search", Part{}).Scale(3)})
	if structure != 6*time.Second || measured != 6*time.Second {
		t.Errorf("3 trials of 1 s, no overhead, half re-run: structure %v, 3 units of one trial %v (want 6s each)", structure, measured)
	}
}

// TestUnitOfSeveralKinds: a unit closed as several kinds counts in each,
// and a kind it is not stays at its prior.
func TestUnitOfSeveralKinds(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := New(t0)
	for k := range 3 {
		e.Trial("search", t0.Add(time.Duration(k+1)*time.Second), time.Second, false)
	}
	e.Unit("search", "search at max")
	prior := Part{Trials: 9, Nominal: 9 * time.Second}
	for _, kind := range []string{"search", "search at max"} {
		if got := e.Expect(kind, "search", prior); got.Trials != 3 {
			t.Errorf("%s: %+v, want the 3 trials closed", kind, got)
		}
	}
	if got := e.Expect("search below max", "search", prior); got.Trials != 9 {
		t.Errorf("a kind not closed: %+v, want its prior", got)
	}
	if got := e.Started(); got.Trials != 0 {
		t.Errorf("after the unit closed: %+v started, want none", got)
	}
}

// TestPriorUnits: with PriorUnits the prior counts as that many units
// beside those seen (one unit of 30 trials against a prior of 10, weighed
// as 3 units: 15); without, the units seen alone (30).
func TestPriorUnits(t *testing.T) {
	for _, c := range []struct{ prior, want float64 }{{0, 30}, {3, 15}} {
		e := New(time.Unix(0, 0))
		e.PriorUnits = c.prior
		for i := range 30 {
			e.Trial("search", time.Unix(int64(i+1), 0), time.Second, false)
		}
		e.Unit("search")
		got := e.Expect("search", "search", Part{Trials: 10, Nominal: 10 * time.Second})
		if math.Abs(got.Trials-c.want) > 1e-9 || got.Nominal != time.Duration(c.want)*time.Second {
			t.Errorf("PriorUnits %v: expect %+v, want %v trials", c.prior, got, c.want)
		}
	}
}

// TestPriorUnitsDilutesReruns: with PriorUnits, the re-runs' share is
// of what the run spent and that many units' worth of time with none (a
// unit as long as those closed took on the mean): one unit of 4 trials of
// 1 s, 2 of them re-runs, against 3 such units clean, adds 2 s in 16
// (× 8/7), not 2 in 4 (× 2: without PriorUnits, as before).
func TestPriorUnitsDilutesReruns(t *testing.T) {
	for _, c := range []struct{ prior, want float64 }{{0, 2}, {3, 16.0 / 14}} {
		e := New(time.Unix(0, 0))
		e.PriorUnits = c.prior
		for i := range 4 {
			e.Trial("search", time.Unix(int64(i+1), 0), time.Second, i%2 == 1)
		}
		e.Unit("search")
		got := e.Raw(Work{Trials("search", 7, time.Second)})
		if want := time.Duration(7 * c.want * float64(time.Second)); (got - want).Abs() > time.Microsecond {
			t.Errorf("PriorUnits %v: 7 trials of 1 s take %v, want %v", c.prior, got, want)
		}
	}
}

// TestLatestUnitsWeighMore: a class's overhead and share of re-runs
// weigh the trials of units closed before the one under way by overKeep
// and rerunKeep, per unit of the class closed since; a class that a unit
// did not run keeps its weights.
func TestLatestUnitsWeighMore(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := New(t0)
	at := t0
	run := func(class string, n int, over time.Duration, rerun bool) {
		for range n {
			at = at.Add(time.Second + over)
			e.Trial(class, at, time.Second, rerun)
		}
	}
	run("backtoback", 10, 50*time.Millisecond, false) // lossless bursts
	e.Unit("backtoback")
	run("latency", 4, 0, false)
	e.Unit("latency")
	run("backtoback", 5, 500*time.Millisecond, false) // bursts that lost
	// Ten trials at 50 ms weighed 0.3 beside five at 500 ms: 331.25 ms,
	// where every trial alike is 200 ms. The latency unit between them
	// ran no burst and faded none.
	want := (0.3*10*0.05 + 5*0.5) / (0.3*10 + 5)
	if got := e.Raw(Work{Trials("backtoback", 1, 0)}).Seconds(); math.Abs(got-want) > 1e-6 {
		t.Errorf("a burst's overhead: %.6f s, want %.6f s", got, want)
	}
	if got := e.Raw(Work{Trials("latency", 1, 0)}); got != 0 {
		t.Errorf("a latency trial's overhead: %v, want 0", got)
	}

	// A unit of 4 trials of 1 s, 2 of them re-runs, then one of 4 with
	// none: the first unit's time weighs 0.8, so the share is 1.6 s in
	// 7.2, where alike it would be 2 in 8.
	e = New(t0)
	for i := range 8 {
		e.Trial("search", t0.Add(time.Duration(i+1)*time.Second), time.Second, i < 4 && i%2 == 1)
		if i == 3 {
			e.Unit("search")
		}
	}
	wantShare := 7.2 / (7.2 - 1.6)
	if got := e.Raw(Work{Trials("search", 1, time.Second)}).Seconds(); math.Abs(got-wantShare) > 1e-6 {
		t.Errorf("a 1 s trial with its share of re-runs: %.6f s, want %.6f s", got, wantShare)
	}
}

// TestAsideAndReuse: trials run ahead of the units that use them (a
// sweep's survey) leave the unit under way, keep their cost, and count in
// each unit that reuses one, at no time.
func TestAsideAndReuse(t *testing.T) {
	t0 := time.Unix(0, 0)
	e := New(t0)
	e.Trial("search", t0.Add(1500*time.Millisecond), time.Second, false)
	e.Trial("search", t0.Add(3000*time.Millisecond), time.Second, false)
	e.Aside()
	if got := e.Started(); got.Trials != 0 {
		t.Fatalf("after Aside, the unit under way holds %v trials", got.Trials)
	}
	e.Reuse(time.Second)
	e.Trial("search", t0.Add(4500*time.Millisecond), time.Second, false)
	if got := e.Started(); got.Trials != 2 || got.Nominal != 2*time.Second {
		t.Errorf("the unit under way: %+v, want the trial reused and the one run", got)
	}
	e.Unit("search")
	if got := e.Expect("search", "search", Part{}); got.Trials != 2 {
		t.Errorf("a unit takes %v trials, want 2", got.Trials)
	}
	// Every trial cost 0.5 s beside its second, the survey's too.
	if got := e.Raw(Work{Trials("search", 2, time.Second)}); got != 3*time.Second {
		t.Errorf("2 trials of 1 s: %v, want 3s", got)
	}
}

// TestPhrase: the time left to the second; under a second but not none,
// "under 1s left", not "about 0s left" while trials still run.
func TestPhrase(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{90 * time.Second, "about 1m30s left"},
		{1400 * time.Millisecond, "about 1s left"},
		{600 * time.Millisecond, "about 1s left"},
		{300 * time.Millisecond, "under 1s left"},
		{0, "about 0s left"},
	} {
		if got := Phrase(c.d); got != c.want {
			t.Errorf("Phrase(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
