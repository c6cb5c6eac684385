package mlrsearch

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// dut is a simulated device: it carries up to limit per second; above it,
// what it cannot carry is lost, after a queue that holds queue's worth of
// the excess (so a short trial may hide a little overload). Stalls spoil
// every stallEvery-th trial (our sender's, not the device's); noise
// loses up to that share at random below the limit.
type dut struct {
	limit      float64
	queue      time.Duration
	noise      float64
	stallEvery int
	rng        *rand.Rand
	n          int
	trials     []Trial
}

// criteria: no loss, and at most 0.5 %.
var losses = []float64{0, 0.005}

func (d *dut) trial(_ context.Context, t Trial) (Outcome, error) {
	d.n++
	d.trials = append(d.trials, t)
	if d.stallEvery > 0 && d.n%d.stallEvery == 0 {
		return Outcome{Pass: []bool{false, false}, Spoiled: true}, nil
	}
	sent := t.Rate * t.Duration.Seconds()
	carried := d.limit*t.Duration.Seconds() + d.limit*d.queue.Seconds()
	lost := max(0, sent-carried)
	if d.noise > 0 && d.rng.Float64() < 0.2 {
		lost += d.noise * sent * d.rng.Float64()
	}
	ratio := lost / sent
	o := Outcome{Pass: make([]bool, len(losses))}
	for i, l := range losses {
		o.Pass[i] = ratio <= l
	}
	if lost > 0 {
		o.Delivered = t.Rate * (1 - ratio)
	}
	return o, nil
}

func cfg() Config {
	return Config{Losses: losses, Min: 100, Max: 148810, Initial: time.Second, Final: 10 * time.Second}
}

// TestFindsTheLimit: against a sharp limit, both bounds lie within the goal
// under the limit, are confirmed by a final trial each, and the search is
// short: few trials, and only the last of the final length.
func TestFindsTheLimit(t *testing.T) {
	for _, limit := range []float64{14881, 8445, 822, 100000, 148810} {
		d := &dut{limit: limit}
		res, err := Search(context.Background(), cfg(), d.trial)
		if err != nil {
			t.Fatal(err)
		}
		var long time.Duration
		final := 0
		for _, r := range res.Trials {
			long += r.Duration
			if r.Final {
				final++
				if r.Duration != 10*time.Second {
					t.Errorf("limit %v: a final trial of %v", limit, r.Duration)
				}
			}
		}
		for i, b := range res.Bounds {
			if top := limit / (1 - losses[i]); !b.Confirmed || b.Lower > top || b.Lower < top*0.99 {
				t.Errorf("limit %v: criterion %d: %+v, want confirmed within 1 %% under %v", limit, i, b, top)
			}
			if !res.Trials[b.LowerTrial].Final || res.Trials[b.LowerTrial].Rate != b.Lower {
				t.Errorf("limit %v: criterion %d: the lower bound's trial %+v is not a final one at it", limit, i, res.Trials[b.LowerTrial])
			}
		}
		if final > 2 || len(res.Trials) > 10 || long > 40*time.Second {
			t.Errorf("limit %v: %d trials (%d final), %v of trials: %+v", limit, len(res.Trials), final, long, d.trials)
		}
	}
}

// TestDurationsGrow: the trials' lengths never shrink, start at Initial
// and the phases' lengths lie geometrically between Initial and Final.
func TestDurationsGrow(t *testing.T) {
	c := cfg()
	c.Phases = 3
	c.defaults()
	want := []time.Duration{time.Second, 2154434690, 4641588833, 10 * time.Second}
	for k, w := range want {
		if got := c.Duration(k); got.Round(time.Millisecond) != w.Round(time.Millisecond) {
			t.Errorf("phase %d: %v, want %v", k, got, w)
		}
	}
	d := &dut{limit: 30000, queue: 5 * time.Millisecond}
	res, err := Search(context.Background(), c, d.trial)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trials[0].Rate != c.Max || res.Trials[0].Duration != time.Second {
		t.Errorf("first trial %+v, want 1 s at Max", res.Trials[0].Trial)
	}
	for i := 1; i < len(res.Trials); i++ {
		if res.Trials[i].Duration < res.Trials[i-1].Duration {
			t.Errorf("trial %d is shorter than the one before: %+v", i, res.Trials)
		}
	}
	for i, b := range res.Bounds {
		if top := 30000 / (1 - losses[i]) * 1.0005; !b.Confirmed || b.Lower > top || b.Lower < top*0.99 {
			t.Errorf("criterion %d: %+v", i, b)
		}
	}
}

// TestQueueHidesLoss: a deep queue lets short trials pass above the
// limit; the longer phases find the loss and the bounds still end under
// the limit, confirmed.
func TestQueueHidesLoss(t *testing.T) {
	d := &dut{limit: 10000, queue: 100 * time.Millisecond}
	res, err := Search(context.Background(), cfg(), d.trial)
	if err != nil {
		t.Fatal(err)
	}
	// What a final trial may carry: the limit for its 10 s and the
	// queue's 0.1 s (1 %), and the loss each criterion allows.
	for i, b := range res.Bounds {
		top := 10000 * 1.01 / (1 - losses[i])
		if !b.Confirmed || b.Lower > top || b.Lower < top*0.99 {
			t.Errorf("criterion %d: %+v, want within 1 %% under %v (trials %+v)", i, b, top, d.trials)
		}
	}
	// The short trials' passes above that were measured again.
	for _, r := range res.Trials {
		if r.Final && r.Rate > 10000*1.01/(1-losses[1]) && r.Pass[1] {
			t.Errorf("a final trial at %v passed", r.Rate)
		}
	}
}

// TestStallsRunAgain: a spoiled trial is run again, not counted as the
// device's failure; the bounds stay where the device's limit is.
func TestStallsRunAgain(t *testing.T) {
	d := &dut{limit: 14881, stallEvery: 3}
	res, err := Search(context.Background(), cfg(), d.trial)
	if err != nil {
		t.Fatal(err)
	}
	spoiled := 0
	for i, r := range res.Trials {
		if r.Spoiled {
			spoiled++
			if r.Untested || i+1 >= len(res.Trials) || res.Trials[i+1].Rate != r.Rate || res.Trials[i+1].Again != r.Again+1 {
				t.Errorf("spoiled trial %d not run again: %+v", i, res.Trials)
			}
		}
	}
	if spoiled == 0 {
		t.Fatal("the simulation spoiled no trial")
	}
	for i, b := range res.Bounds {
		if top := 14881 / (1 - losses[i]); !b.Confirmed || b.Lower > top || b.Lower < top*0.99 {
			t.Errorf("criterion %d: %+v", i, b)
		}
	}
}

// TestAlwaysSpoiled: a rate spoiled every time counts as a failure this
// host could not test, and the search steps down from it, by steps that
// double, until this host can test.
func TestAlwaysSpoiled(t *testing.T) {
	d := &dut{limit: 20000}
	spoilAbove := 100000.0
	trial := func(ctx context.Context, tr Trial) (Outcome, error) {
		if tr.Rate > spoilAbove {
			return Outcome{Pass: []bool{false, false}, Spoiled: true}, nil
		}
		return d.trial(ctx, tr)
	}
	res, err := Search(context.Background(), cfg(), trial)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Trials[1].Untested || res.Trials[0].Untested || res.Trials[2].Rate >= res.Trials[1].Rate || len(res.Trials) > 30 {
		t.Errorf("want the top rate run twice, counted untested, then lower, in all few trials: %+v", res.Trials)
	}
	for i, b := range res.Bounds {
		if top := 20000 / (1 - losses[i]); !b.Confirmed || b.Lower > top || b.Lower < top*0.99 {
			t.Errorf("criterion %d: %+v", i, b)
		}
	}
}

// TestEveryFinalTrialSpoiled: this host spoils every trial of the final
// length, at any rate. No rate is confirmed, and the untested rates lie
// under every pass; the bounds are still the best rate seen, unconfirmed,
// from the longest trial that passed at it (not 0, as if nothing had
// passed).
func TestEveryFinalTrialSpoiled(t *testing.T) {
	d := &dut{limit: 20000}
	c := cfg()
	c.MaxTrials = 20
	trial := func(ctx context.Context, tr Trial) (Outcome, error) {
		if tr.Duration >= c.Final {
			return Outcome{Pass: []bool{false, false}, Spoiled: true}, nil
		}
		return d.trial(ctx, tr)
	}
	res, err := Search(context.Background(), c, trial)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range res.Bounds {
		top := 20000 / (1 - losses[i])
		if b.Confirmed || b.Lower > top || b.Lower < top*0.95 || b.LowerTrial < 0 {
			t.Fatalf("criterion %d: %+v, want unconfirmed, within 5 %% under %.0f", i, b, top)
		}
		lt := res.Trials[b.LowerTrial]
		for _, r := range res.Trials {
			if r.Rate == lt.Rate && r.Pass[i] && !r.Spoiled && r.Duration > lt.Duration {
				t.Errorf("criterion %d: the bound's trial lasted %v, a pass at its rate lasted %v", i, lt.Duration, r.Duration)
			}
		}
	}
}

// TestNoisyDevice: random loss under the limit pulls the NDR down but
// never above the limit, the search ends within its trial budget, and the
// PDR, which tolerates the noise, lands near the limit.
func TestNoisyDevice(t *testing.T) {
	for seed := range uint64(20) {
		d := &dut{limit: 14881, noise: 0.002, rng: rand.New(rand.NewPCG(seed, 1))}
		res, err := Search(context.Background(), cfg(), d.trial)
		if err != nil {
			t.Fatal(err)
		}
		ndr, pdr := res.Bounds[0], res.Bounds[1]
		if ndr.Lower > 14881 || pdr.Lower > 14881/(1-0.005-0.002) || len(res.Trials) > 40 {
			t.Errorf("seed %d: %+v %+v after %d trials", seed, ndr, pdr, len(res.Trials))
		}
		if !pdr.Confirmed || pdr.Lower < 14881*0.99 {
			t.Errorf("seed %d: PDR %+v, want confirmed within 1 %% of the limit", seed, pdr)
		}
	}
}

// TestNothingPasses: a device that loses at every rate has no bounds.
func TestNothingPasses(t *testing.T) {
	trial := func(_ context.Context, tr Trial) (Outcome, error) {
		return Outcome{Pass: []bool{false, false}, Delivered: tr.Rate / 2}, nil
	}
	res, err := Search(context.Background(), cfg(), trial)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range res.Bounds {
		if b.Lower != 0 || b.Confirmed || b.Upper != 100 {
			t.Errorf("criterion %d: %+v", i, b)
		}
	}
	if len(res.Trials) >= 40 {
		t.Errorf("%d trials to find nothing passes", len(res.Trials))
	}
}

// TestEndsAndFails: a trial's error ends the search with it; a cancelled
// context ends it before the next trial; MaxTrials bounds it.
func TestEndsAndFails(t *testing.T) {
	boom := errors.New("unreachable")
	_, err := Search(context.Background(), cfg(), func(context.Context, Trial) (Outcome, error) { return Outcome{}, boom })
	if !errors.Is(err, boom) {
		t.Errorf("err %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &dut{limit: 1000}
	res, err := Search(ctx, cfg(), func(ctx context.Context, tr Trial) (Outcome, error) { cancel(); return d.trial(ctx, tr) })
	if !errors.Is(err, context.Canceled) || len(res.Trials) != 1 {
		t.Errorf("err %v after %d trials", err, len(res.Trials))
	}
	c := cfg()
	c.MaxTrials = 3
	res, _ = Search(context.Background(), c, (&dut{limit: 1000}).trial)
	if len(res.Trials) != 3 || res.Bounds[0].Confirmed {
		t.Errorf("MaxTrials 3: %d trials, %+v", len(res.Trials), res.Bounds)
	}
}

// TestLeftCountsDown: the work left, from the search's state, shrinks as
// the search goes and is zero at its end.
func TestLeftCountsDown(t *testing.T) {
	c := cfg()
	var lefts []float64
	var noms []time.Duration
	c.OnTrial = func(_ Trial, _ Outcome, s State) {
		n, d := s.Left()
		lefts, noms = append(lefts, n), append(noms, d)
	}
	d := &dut{limit: 14881}
	if _, err := Search(context.Background(), c, d.trial); err != nil {
		t.Fatal(err)
	}
	last := len(lefts) - 1
	if lefts[last] != 0 || noms[last] != 0 {
		t.Errorf("left at the end: %v trials, %v", lefts[last], noms[last])
	}
	if lefts[0] < float64(last) || noms[0] < 10*time.Second {
		t.Errorf("left after the first trial: %v trials (%v), but %d more ran", lefts[0], noms[0], last)
	}
	if math.IsNaN(lefts[0]) {
		t.Error("NaN")
	}
}

// TestLeftSharedBounds: in the phase under way, two criteria whose bounds
// coincide are narrowed by the same trials and count once; bounds apart
// count each.
func TestLeftSharedBounds(t *testing.T) {
	c := cfg()
	c.defaults()
	at := func(lo, hi []float64) float64 {
		n, _ := State{Phase: c.Phases, Lower: lo, Upper: hi, cfg: c}.Left()
		return n
	}
	one := at([]float64{10000}, []float64{12000})
	if one == 0 {
		t.Fatal("an interval of 20 % at a 1 % goal needs halvings")
	}
	if got := at([]float64{10000, 10000}, []float64{12000, 12000}); got != one {
		t.Errorf("two criteria with one interval: %v trials, want %v (as one)", got, one)
	}
	if got := at([]float64{10000, 11000}, []float64{12000, 12000}); got <= one {
		t.Errorf("two criteria apart: %v trials, want more than %v", got, one)
	}
}

// TestLeftFollowsTheRateRule: the work left counts the trials the rate
// rule will run, not a blind halving: in a phase with no pass of its
// length yet, a shorter phase's pass in the interval is measured again
// first (one trial, when the failure above it lies within the goal); with
// a pass and what the device delivered in a failure well above it, the
// next trial goes just above that rate, and where it fails (as the
// device's rate says) nothing is left to halve.
func TestLeftFollowsTheRateRule(t *testing.T) {
	c := Config{Losses: []float64{0}, Min: 100, Max: 148810, Initial: time.Second, Final: 10 * time.Second}
	c.defaults()
	at := func(phase int, recs ...Record) (State, Trial) {
		s := &searcher{cfg: c, phase: phase, recs: recs}
		next, ok := s.next()
		if !ok {
			t.Fatal("the search has no next trial")
		}
		return s.state(), next
	}
	rec := func(rate float64, k int, pass bool, delivered float64) Record {
		return Record{Trial: Trial{Rate: rate, Duration: c.Duration(k), Phase: k, Final: k == c.Phases},
			Outcome: Outcome{Pass: []bool{pass}, Delivered: delivered}}
	}

	// A 10 s confirmation failed 0.5 % above a 3.2 s pass.
	st, next := at(c.Phases, rec(1000, 1, true, 0), rec(1005, c.Phases, false, 1004))
	if next.Rate != 1000 || next.Duration != c.Final {
		t.Fatalf("next trial %+v, want the 3.2 s pass measured again at 10 s", next)
	}
	if n, d := st.Left(); n != 1 || d != c.Final {
		t.Errorf("left after a failed confirmation above a shorter pass: %v trials (%v), want 1 (10s)", n, d)
	}

	// The first trial, at the highest rate, failed with 1010/s delivered:
	// one just under that, one just above, and the later phases.
	st, next = at(0, rec(148810, 0, false, 1010))
	if want := 1010 * (1 - c.Width(0)/4); math.Abs(next.Rate-want) > 1e-9 {
		t.Fatalf("next trial at %v, want just under the delivered rate (%v)", next.Rate, want)
	}
	if n, _ := st.Left(); n != 2+2+1 {
		t.Errorf("left after a first trial that saw the device's rate: %v trials, want 5", n)
	}

	// The first phase: a pass at 1000/s, the highest rate failed with
	// 1010/s delivered.
	st, next = at(0, rec(148810, 0, false, 1010), rec(1000, 0, true, 0))
	if want := 1010 * (1 + c.Width(0)/4); math.Abs(next.Rate-want) > 1e-9 {
		t.Fatalf("next trial at %v, want just above the delivered rate (%v)", next.Rate, want)
	}
	// That trial, then the later phases: the pass measured at 3.2 s and
	// one halving, and the confirmation.
	want := 1 + 2 + 1.0
	if n, _ := st.Left(); n != want {
		t.Errorf("left with the device's rate known: %v trials, want %v (not the halvings up to the highest rate)", n, want)
	}
}
