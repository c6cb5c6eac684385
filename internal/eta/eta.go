// Package eta estimates the time a run of trials has left (sweep, RFC
// 2544, matrix): the work that remains, counted from the run's structure
// (the trials a search still needs: for the multi-rate search, the
// halvings of its phase's intervals and the trials of its later, longer
// phases, at their lengths (internal/mlrsearch's State.Left); for a plain
// bisection, its halvings to the resolution; the searches, tests and sizes
// still to come), times the cost of a trial as this run has measured it
// (its nominal length plus the overhead around it: the gap, setting up,
// draining), and the re-runs a stalling host forces, as the share of each
// class's time they took in this run (both weighing the latest units
// most, as they drift over a run; a unit's length, e.g. a search's, is
// learned without them, so that one unit a host stall drew out does not
// set what every later one takes). The estimate is smoothed so that it
// never rises more than 2× from one update to the next. It measures nothing itself and does no I/O;
// the caller passes the monotonic clock's readings.
package eta

import (
	"fmt"
	"math"
	"time"
)

// Part is some of the work left: Trials trials (an expectation, so
// fractional) that are asked to last Nominal in all, of a Class (trials of
// one class share their measured overhead and share of re-runs, e.g.
// "search", "latency"). Neither the run's structure nor a unit's length
// learned from the run counts re-runs: the estimate adds their share.
type Part struct {
	Class   string
	Trials  float64
	Nominal time.Duration
}

// Work is all the work left, part by part.
type Work []Part

// Trials is n trials of class, each asked to last each.
func Trials(class string, n float64, each time.Duration) Part {
	return Part{Class: class, Trials: n, Nominal: time.Duration(n * float64(each))}
}

// Scale is p times k: k units of work like p.
func (p Part) Scale(k float64) Part {
	return Part{Class: p.Class, Trials: p.Trials * k, Nominal: time.Duration(k * float64(p.Nominal))}
}

// Bisect is how many trials a bisection of the rates between lo (passed)
// and hi (failed) still needs until hi is within the share res above lo;
// 0 when it is already.
func Bisect(lo, hi, res float64) float64 {
	if !(lo > 0) || !(hi > lo*(1+res)) || !(res > 0) {
		return 0
	}
	if math.IsInf(hi, 1) {
		return 0
	}
	// Less a hair of rounding, so that an interval of exactly 2^k steps
	// takes k trials.
	return math.Ceil(math.Log2(math.Log(hi/lo)/math.Log1p(res)) - 1e-9)
}

// BisectInt is how many trials a bisection of the integers between lo and
// hi still needs until they are adjacent.
func BisectInt(lo, hi int64) float64 {
	if hi-lo <= 1 {
		return 0
	}
	return math.Ceil(math.Log2(float64(hi - lo)))
}

// Estimator learns the cost of trials as a run goes and turns the work
// left into time. It is not safe for concurrent use.
type Estimator struct {
	// PriorUnits is how many units the prior a unit is expected from
	// (Expect) counts as beside those seen: 0 sets it aside once one
	// unit of its kind closed. The share of re-runs is learned alike:
	// beside the time spent, that many units' worth with none.
	PriorUnits float64
	last       time.Time // the latest trial's end (or the run's start)
	overhead   map[string]*mean
	all        mean
	units      map[string]*unitMean
	unit       Part // the trials of the unit under way, re-runs left out
	shown      time.Duration
	hasShown   bool
	closed     int // units closed (a unit closed as several kinds counts once)
	// The time every trial took, unfaded: in units closed, and since.
	total, unitTook float64
}

// mean is what a class's trials cost: the sum and count of their
// overheads, and the time they took in all and in re-runs, those of
// earlier units faded (fade).
type mean struct {
	sum, n       float64
	spent, rerun float64
	touched      bool // a trial was added in the unit under way
	stale        bool // a unit with trials of the class closed since
}

func (m *mean) add(over, took time.Duration, rerun bool) {
	if m.stale {
		m.fade()
	}
	m.sum, m.n, m.spent, m.touched = m.sum+float64(over), m.n+1, m.spent+float64(took), true
	if rerun {
		m.rerun += float64(took)
	}
}

// close marks the end of a unit: if it ran trials of m's class, they
// weigh less than the next unit's, once that adds one (fade).
func (m *mean) close() {
	m.stale, m.touched = m.stale || m.touched, false
}

// fade weighs what m has counted so far less than the trials to come
// (overKeep, rerunKeep).
func (m *mean) fade() {
	m.sum, m.n = m.sum*overKeep, m.n*overKeep
	m.spent, m.rerun = m.spent*rerunKeep, m.rerun*rerunKeep
	m.stale = false
}

// overKeep and rerunKeep are the weights a class's trials keep, in its
// overhead and in its share of re-runs, each time a unit that ran trials
// of the class closed and the next adds one: what a trial costs and how
// often this host spoils one drift over a run, as a unit's length does
// (unitWeight). A burst
// that loses a frame waits its whole wait for it, one that loses none a
// tenth of it, and at the larger sizes more bursts lose (a far end's
// queue holds fewer frames): with every burst so far weighed alike, the
// last sizes' back-to-back tests read under half of what they took. Small
// frames at high rates draw more host stalls than large ones: with every
// re-run weighed alike, a run's early stalls drew out the estimate of
// its later sizes. On the recordings in the sweep and RFC 2544 tests, with
// the weights before (1 and 1) and these (0.3 and 0.8), the share of
// estimates within 35 % of the time really left went from 97 to 100 %
// (sweep quiet3), 99 to 100 % (RFC 2544 quiet) and 93 to 98 % (RFC 2544
// busy3), the others unchanged. An overKeep of 0.15 or 0 does as well,
// 0.5 a little worse (97 % on busy3), and 0 would let one unit a stall
// drew out set what every trial costs; a rerunKeep of 0.6 loses on the
// most hostile recording (28 to 25 %), 1 keeps sweep quiet3's miss. The
// overhead follows the latest unit more closely: it drifts with the
// size; a share of re-runs is a rare event's, noisier.
const (
	overKeep  = 0.3
	rerunKeep = 0.8
)

type unitMean struct {
	trials  float64 // the recency-weighted mean (see unitWeight)
	nominal time.Duration
	n       int
}

// New starts an estimator for a run that starts at start.
func New(start time.Time) *Estimator {
	return &Estimator{last: start, overhead: map[string]*mean{}, units: map[string]*unitMean{}}
}

// Trial records a trial of class that ended at end and was asked to last
// nominal; rerun says it was the trial before it run again because this
// host spoiled that one (the same size, rate and length: a host stall's
// re-run), which neither the run's structure nor a unit's length counts:
// the estimate adds the share of its class's time that re-runs took so
// far. Its cost is the time since the trial before it ended.
func (e *Estimator) Trial(class string, end time.Time, nominal time.Duration, rerun bool) {
	if !rerun {
		e.unit.Trials++
		e.unit.Nominal += nominal
	}
	took := end.Sub(e.last)
	e.last = end
	e.unitTook += float64(took)
	m := e.overhead[class]
	if m == nil {
		m = &mean{}
		e.overhead[class] = m
	}
	m.add(took-nominal, took, rerun)
	e.all.add(took-nominal, took, rerun)
}

// Unit closes a unit of work of each of kinds (a search, a test of one
// size; one unit may count as several kinds, e.g. a search and a search
// that ended at its highest rate): the trials recorded since the last unit
// closed, re-runs left out, are what a unit of kind takes (see Expect),
// and the trials of their classes so far will weigh less than those to
// come (mean.fade).
func (e *Estimator) Unit(kinds ...string) {
	e.closed++
	e.total += e.unitTook
	e.unitTook = 0
	for _, m := range e.overhead {
		m.close()
	}
	e.all.close()
	for _, kind := range kinds {
		u := e.units[kind]
		if u == nil {
			u = &unitMean{}
			e.units[kind] = u
		}
		if u.n == 0 {
			u.trials, u.nominal = e.unit.Trials, e.unit.Nominal
		} else {
			u.trials = unitWeight*e.unit.Trials + (1-unitWeight)*u.trials
			u.nominal = time.Duration(unitWeight*float64(e.unit.Nominal) + (1-unitWeight)*float64(u.nominal))
		}
		u.n++
	}
	e.unit = Part{}
}

// unitWeight is the weight of the unit just closed in what a unit of its
// kind is expected to take (the rest is the units before it, weighted
// alike): mostly the latest. A run's units go in order (sizes ascending),
// and what a unit takes drifts with it: in a recorded RFC 2544 run the
// first sizes' tests took half as long again as the later ones', and
// the plain mean of all units closed so far read about 1.4× high until the
// end. Against the plain mean, on the four recordings in the sweep and
// RFC 2544 tests, the share of estimates within 35 % of the time really
// left (from a quarter of the way in) went from 95, 51, 23 and 27 % to
// 98, 58, 31 and 61 %; the latest unit alone (1.0) did about as well
// (99, 73, 28, 61 %), but one unit spoiled by a host stall would then set
// the whole estimate. With a host stall's re-runs left out of units (their
// share added per class), the plain mean still does worse (96, 57, 19 and
// 72 % against 99, 71, 36 and 75 %, in the order of the shares above): the
// early sizes' searches are longer without their re-runs too (a host
// stall also makes a search step down and climb back).
const unitWeight = 0.85

// Aside takes the trials recorded since the last unit closed out of the
// unit under way: they were run ahead of the units that use them (a
// sweep's survey runs every size's first trial before the searches), and
// each such unit counts its own with Reuse. Their cost stays measured.
func (e *Estimator) Aside() { e.unit = Part{} }

// Reuse counts in the unit under way a trial run ahead of it (see Aside),
// asked to last nominal: it is part of what the unit takes, but takes no
// time now.
func (e *Estimator) Reuse(nominal time.Duration) {
	e.unit.Trials++
	e.unit.Nominal += nominal
}

// Started is the part of the unit under way done so far: its trials,
// re-runs left out, and their nominal length.
func (e *Estimator) Started() Part { return e.unit }

// Expect is what a unit of kind takes, as class trials: the
// recency-weighted mean (unitWeight) of the units of kind closed so far,
// or prior when none has; re-runs left out of both.
func (e *Estimator) Expect(kind, class string, prior Part) Part {
	u := e.units[kind]
	prior.Class = class
	if u == nil || u.n == 0 {
		return prior
	}
	// The units seen, weighed against the prior as PriorUnits units.
	w := float64(u.n) / (float64(u.n) + e.PriorUnits)
	return Part{Class: class, Trials: w*u.trials + (1-w)*prior.Trials,
		Nominal: time.Duration(w*float64(u.nominal) + (1-w)*float64(prior.Nominal))}
}

// Rest is what is left of the unit under way when a unit of kind takes
// Expect(kind, class, prior): that less what it has done, but at least
// floor (what its structure still needs for certain).
func (e *Estimator) Rest(kind, class string, prior, floor Part) Part {
	x := e.Expect(kind, class, prior)
	x.Trials -= e.unit.Trials
	x.Nominal -= e.unit.Nominal
	x.Trials = max(x.Trials, floor.Trials)
	x.Nominal = max(x.Nominal, floor.Nominal)
	return x
}

// cost is the measured overhead of a trial of class: its own mean, or
// every trial's while it has none; never below zero.
func (e *Estimator) cost(class string) time.Duration {
	if m := e.overhead[class]; m != nil && m.n > 0 {
		return time.Duration(max(m.sum/m.n, 0))
	}
	if e.all.n > 0 {
		return time.Duration(max(e.all.sum/e.all.n, 0))
	}
	return 0
}

// reruns is how much longer the trials of class take with this run's
// re-runs than without: the time its trials took over that time less the
// re-runs' (every trial's while the class has none), at most 3×.
func (e *Estimator) reruns(class string) float64 {
	m := e.overhead[class]
	if m == nil || m.n == 0 {
		m = &e.all
	}
	if m.rerun <= 0 || m.spent <= m.rerun {
		return 1
	}
	// Beside what this run spent, PriorUnits units' worth of trials
	// with no re-run (a unit as long as those closed took on the mean):
	// one search that a host stall drew out does not set the share for
	// every search after it.
	spent := m.spent
	if e.PriorUnits > 0 {
		spent += e.PriorUnits * (e.total + e.unitTook) / float64(max(e.closed, 1))
	}
	return min(spent/(spent-m.rerun), 3)
}

// Raw is the time w takes at the cost measured so far, unsmoothed: each
// part's nominal length plus its trials' overhead, and the re-runs its
// class's share of them adds.
func (e *Estimator) Raw(w Work) time.Duration {
	var d float64
	for _, p := range w {
		if p.Trials <= 0 && p.Nominal <= 0 {
			continue
		}
		x := float64(max(p.Nominal, 0)) + max(p.Trials, 0)*float64(e.cost(p.Class))
		d += x * e.reruns(p.Class)
	}
	return time.Duration(d)
}

// Left is the time w takes (Raw), never more than twice the last value
// above zero it gave: an estimate that rises does so over several updates.
// (Nothing left is said as 0 without resetting that: work found after it,
// such as a sweep's cliff to bisect, rises from the value before.)
func (e *Estimator) Left(w Work) time.Duration {
	d := e.Raw(w)
	if e.hasShown && d > 2*e.shown {
		d = 2 * e.shown
	}
	if d > 0 {
		e.shown, e.hasShown = d, true
	}
	return d
}

// Phrase is how a progress line says the time left d: "about 1m30s
// left", to the second; "under 1s left" while some is left that rounds to
// none (a line that said "about 0s left" while trials still ran would
// not match the state); "about 0s left" once none is.
func Phrase(d time.Duration) string {
	if d > 0 && d < time.Second/2 {
		return "under 1s left"
	}
	return fmt.Sprintf("about %v left", d.Round(time.Second))
}
