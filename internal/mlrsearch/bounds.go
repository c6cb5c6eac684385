package mlrsearch

import (
	"math"
	"time"
)

// bounds is where one criterion stands in the phase under way.
type bounds struct {
	lo, hi float64 // highest pass of the phase's length or longer (0: none), lowest failure (+Inf: none)
	loAt   int     // lo's record (-1: none)
	cand   float64 // highest pass of a shorter length between lo and hi (0: none): measured again
	est    float64 // what the device delivered in the lowest failure that says (0: unknown)
	spoilt bool    // the lowest failure is a rate this host could not test
	near   bool    // a trial of any length passed under hi
	passes int     // of the phase's trials, those that met the criterion
	fails  int     // and those that failed it
}

// counts says whether r is evidence: a spoiled run that was run again is not.
func (r *Record) counts() bool { return !r.Spoiled || r.Untested }

// pass says whether r met criterion i (an untested rate met none).
func (r *Record) pass(i int) bool { return !r.Untested && r.Pass[i] }

// bounds is criterion i's standing in phase k: a failure of any length
// bounds it from above, a pass only when as long as the phase's trials.
func (s *searcher) bounds(i, k int) bounds {
	d := s.cfg.Duration(k)
	b := bounds{hi: math.Inf(1), loAt: -1}
	for _, r := range s.recs {
		if r.counts() && !r.pass(i) && r.Rate < b.hi {
			b.hi, b.est, b.spoilt = r.Rate, r.Delivered/(1-s.cfg.Losses[i]), r.Untested
		}
	}
	for j, r := range s.recs {
		if !r.counts() {
			continue
		}
		if r.Phase == k {
			if r.pass(i) {
				b.passes++
			} else {
				b.fails++
			}
		}
		if !r.pass(i) || r.Rate >= b.hi {
			continue
		}
		if r.Duration >= d && r.Rate > b.lo {
			b.lo, b.loAt = r.Rate, j
		}
	}
	for _, r := range s.recs {
		if r.counts() && r.pass(i) && r.Rate < b.hi {
			b.near = true
			if r.Duration < d && r.Rate > b.lo {
				b.cand = max(b.cand, r.Rate)
			}
		}
	}
	return b
}

// done says whether criterion i's interval is narrow enough for phase k:
// its lower bound holds at the phase's length and its upper bound is
// within the phase's width above (or it passed at Max), or it failed at
// Min (no rate meets it).
func (s *searcher) done(b bounds, k int) bool {
	if b.lo == 0 {
		return b.hi <= s.cfg.Min
	}
	return b.lo >= s.cfg.Max || b.hi <= b.lo*(1+s.cfg.Width(k))
}

// next is the trial the phase under way needs next, for the first
// criterion not yet done; false when every one is and the phase ends.
func (s *searcher) next() (Trial, bool) {
	k := s.phase
	for i := range s.cfg.Losses {
		b := s.bounds(i, k)
		if s.done(b, k) {
			continue
		}
		r := s.rate(b, s.cfg.Width(k))
		if s.tried(r, k) {
			// The rule chose a rate the phase has measured already
			// (the device moved between trials): halve what is left.
			r = s.mid(b)
			if s.tried(r, k) {
				continue
			}
		}
		return Trial{Rate: r, Duration: s.cfg.Duration(k), Phase: k, Final: k == s.cfg.Phases}, true
	}
	return Trial{}, false
}

// rate is the next rate for a criterion standing at b, narrowing to w:
//
//   - a pass of a shorter length is measured again first, or a rate under
//     the failure by a step that doubles with every failure of the phase
//     when the pass lies further under it;
//   - with no failure yet, Max, or above the pass by a step that doubles
//     with every pass of the phase;
//   - with no pass yet, just under what the device delivered in the lowest
//     failure, when that lies well under it, or under the failure by a step
//     that doubles with every failure of the phase (half of it when
//     nothing says where the device's limit lies: no estimate, and no
//     pass under a rate this host could not test);
//   - between a pass and a failure, just above what the device delivered
//     when that lies between them (a failure there leaves half the width),
//     or their geometric middle, after a run of passes no more than a
//     doubling step above the pass.
func (s *searcher) rate(b bounds, w float64) float64 {
	switch {
	case b.cand > 0 && !math.IsInf(b.hi, 1):
		// Not below the failure by more than a step that doubles
		// with each of the phase's failures: a pass of a shorter
		// length far under it (a gallop's) would cost as many
		// trials again to climb back from.
		return max(b.cand, b.hi*max(0.5, 1-w*math.Pow(2, float64(b.fails))))
	case b.cand > 0:
		return b.cand
	case math.IsInf(b.hi, 1) && b.lo == 0:
		return s.cfg.Max
	case math.IsInf(b.hi, 1):
		return min(s.cfg.Max, b.lo*(1+w*math.Pow(2, float64(b.passes))))
	case b.lo == 0:
		if r, ok := underSeen(b, w); ok {
			return max(s.cfg.Min, r)
		}
		if b.est == 0 && !(b.spoilt && b.near) {
			// Nothing says where the limit lies: halve rather than
			// creep down. (A rate this host could not test says
			// nothing of the device either, but when shorter trials
			// passed near it, step down from it.)
			return max(s.cfg.Min, b.hi/2)
		}
		return max(s.cfg.Min, b.hi*max(0.5, 1-w*math.Pow(2, float64(b.fails))))
	}
	if r, ok := aboveSeen(b, w); ok {
		return r
	}
	return min(s.mid(b), b.lo*(1+w*math.Pow(2, float64(b.passes))))
}

// underSeen is the rate just under what the device delivered in the
// lowest failure (b.est), and whether a search with no pass jumps there:
// when that lies well under the failure.
func underSeen(b bounds, w float64) (float64, bool) {
	r := b.est * (1 - w/4)
	return r, b.est > 0 && r <= b.hi*(1-w/2)
}

// aboveSeen is the rate just above what the device delivered in the
// lowest failure, and whether a search between a pass and that failure
// tries it next: when it lies between them (a failure there leaves half
// the width).
func aboveSeen(b bounds, w float64) (float64, bool) {
	r := b.est * (1 + w/4)
	return r, b.est > 0 && r > b.lo*(1+w/4) && r < b.hi*(1-w/4)
}

// mid is the geometric middle of b's interval (or of what lies under its
// failure, or over its pass, up to Max).
func (s *searcher) mid(b bounds) float64 {
	lo, hi := b.lo, min(b.hi, s.cfg.Max)
	if lo == 0 {
		lo = max(s.cfg.Min, hi/2)
		if lo >= hi {
			return lo
		}
	}
	return math.Sqrt(lo * hi)
}

// tried says whether phase k has measured rate r with a trial that counts.
func (s *searcher) tried(r float64, k int) bool {
	for _, rec := range s.recs {
		if rec.Phase == k && rec.Rate == r && rec.counts() {
			return true
		}
	}
	return false
}

// result is what the search found: per criterion, its bounds in the final
// phase (Confirmed), or in the latest phase with a pass when the trials ran
// out first, or else the highest pass below every failure this host could
// test (untestedPass).
func (s *searcher) result() Result {
	res := Result{Trials: s.recs}
	for i := range s.cfg.Losses {
		b := s.bounds(i, s.cfg.Phases)
		bd := Bound{Lower: b.lo, Upper: b.hi, LowerTrial: b.loAt, Confirmed: b.lo > 0}
		for k := s.cfg.Phases - 1; bd.Lower == 0 && k >= 0; k-- {
			if e := s.bounds(i, k); e.lo > 0 {
				bd.Lower, bd.LowerTrial = e.lo, e.loAt
			}
		}
		if bd.Lower == 0 {
			bd.Lower, bd.LowerTrial = s.untestedPass(i)
		}
		res.Bounds = append(res.Bounds, bd)
	}
	return res
}

// untestedPass is criterion i's highest pass (the longest trial at its
// rate, and its record) below every failure but those of rates this host
// could not test, or 0 and -1 when there is none. It matters only when no
// phase has a pass under its lowest failure: when this host spoiled every
// trial of a rate under the passes (an untested rate counts as a failure,
// so that the search goes below it), such as every confirmation of a host
// that stalls in each long trial. The passes above it are still what the
// far end did, the highest of them the best rate seen.
func (s *searcher) untestedPass(i int) (float64, int) {
	hi := math.Inf(1)
	for _, r := range s.recs {
		if r.counts() && !r.Untested && !r.pass(i) {
			hi = min(hi, r.Rate)
		}
	}
	lo, at := 0.0, -1
	for j, r := range s.recs {
		if !r.counts() || !r.pass(i) || r.Rate >= hi {
			continue
		}
		if r.Rate > lo || r.Rate == lo && r.Duration > s.recs[at].Duration {
			lo, at = r.Rate, j
		}
	}
	return lo, at
}

// State is where a search stands after a trial, per criterion: its phase,
// and the bounds of its interval in that phase (Lower 0: none yet of the
// phase's length; Upper +Inf: none yet).
type State struct {
	Phase        int
	Lower, Upper []float64
	Trials       int
	cfg          Config
	// at is each criterion's standing: what the next trial's rate is
	// chosen from (a pass of a shorter phase to measure again, what the
	// device delivered in the lowest failure).
	at []bounds
}

// Start is where a search with c stands before its first trial.
func (c Config) Start() State {
	c.defaults()
	return (&searcher{cfg: c}).state()
}

// After is where a search with c stands after its first trial (at Max,
// the first phase's length) showed first: what a caller that ran that
// trial ahead of the search (a sweep's survey) knows of the search's
// course before it starts.
func (c Config) After(first Outcome) State {
	c.defaults()
	t := Trial{Rate: c.Max, Duration: c.Duration(0)}
	s := &searcher{cfg: c, recs: []Record{{Trial: t, Outcome: first}}}
	return s.state()
}

func (s *searcher) state() State {
	st := State{Phase: s.phase, Trials: len(s.recs), cfg: s.cfg}
	for i := range s.cfg.Losses {
		b := s.bounds(i, s.phase)
		st.Lower, st.Upper = append(st.Lower, b.lo), append(st.Upper, b.hi)
		st.at = append(st.at, b)
	}
	return st
}

// Left is the work the search still needs, from its structure: in the
// phase under way, per criterion, the halvings of its interval down to the
// phase's width, as the rate rule will run them (while it has no pass:
// the jump under the device's rate and one above, and no more where a
// failure saw that rate; a pass of a shorter phase in its interval
// measured again at this phase's length, which the phase runs first, and
// the halvings above it; with a pass, where a failure above saw the
// device's rate, one trial just above that rate and the halvings under
// it); in each phase after, per criterion, its
// pass measured again at the longer length and one halving; in the final
// phase, per criterion, its confirmation. In the phase under way,
// criteria whose bounds coincide count once: every trial judges every
// criterion, so the halvings that narrow one narrow the other alike (a
// device with a sharp limit, whose loss goes from none to much within the
// resolution). The later phases count each criterion: a longer trial may
// part them (a rate that lost a few frames fails one and passes the
// other). It never counts more trials than the search has left
// (MaxTrials).
func (st State) Left() (trials float64, nominal time.Duration) {
	c := st.cfg
	n := 0.0
	for i := range st.Lower {
		lo, hi := st.Lower[i], min(st.Upper[i], c.Max)
		if st.sameAsBefore(i) {
			continue
		}
		w, b := c.Width(st.Phase), st.standing(i)
		_, jumps := underSeen(b, w)
		switch {
		case lo == 0 && hi <= c.Min:
		case lo == 0 && b.cand > 0:
			// A pass of a shorter phase: measured again at this
			// phase's length first, then the halvings above it.
			n += 1 + halvings(b.cand, hi, w)
		case lo == 0 && !math.IsInf(b.hi, 1) && jumps:
			// A failure that saw the device's rate: a trial just
			// under it, which passes, and one just above, which
			// fails, leave an interval within the width.
			n += 2
		case lo == 0:
			n += 2 + halvings(hi*(1-w), hi, w)
		case lo < c.Max:
			n += halvings(lo, hi, w)
			if r, ok := aboveSeen(b, w); ok && b.cand == 0 {
				// The next trial goes just above what the device
				// delivered (rate): where it fails, as the
				// device's rate says it will, the halvings are
				// of what lies under it.
				n = min(n, 1+halvings(lo, r, w))
			}
		}
	}
	add := func(k int, m float64) {
		room := float64(c.MaxTrials) - float64(st.Trials) - trials
		m = max(0, min(m, room))
		trials += m
		nominal += time.Duration(m * float64(c.Duration(k)))
	}
	add(st.Phase, n)
	crit := float64(len(st.Lower))
	for k := st.Phase + 1; k <= c.Phases; k++ {
		switch {
		case k < c.Phases:
			add(k, 2*crit)
		case c.Duration(k) > c.Duration(k-1):
			add(k, crit)
		}
	}
	return trials, nominal
}

// sameAsBefore says whether criterion i's bounds are those of a criterion
// before it.
func (st State) sameAsBefore(i int) bool {
	for j := range i {
		if st.Lower[j] == st.Lower[i] && st.Upper[j] == st.Upper[i] && st.standing(j) == st.standing(i) {
			return true
		}
	}
	return false
}

// standing is criterion i's standing (the zero bounds when the State was
// not made by a search).
func (st State) standing(i int) bounds {
	if i < len(st.at) {
		return st.at[i]
	}
	return bounds{}
}

// halvings is how many geometric halvings take hi within the share w above lo.
func halvings(lo, hi, w float64) float64 {
	if !(lo > 0) || hi <= lo*(1+w) {
		return 0
	}
	return math.Ceil(math.Log2(math.Log(hi/lo) / math.Log1p(w)))
}
