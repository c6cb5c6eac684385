package sweep

import (
	"math"
	"time"

	"github.com/wirebench/wirebench/internal/eta"
	"github.com/wirebench/wirebench/internal/mlrsearch"
	"github.com/wirebench/wirebench/internal/result"
)

// unitSearch is the eta unit of one search, and the class of its trials.
const unitSearch = "search"

// Nominal is how long s is asked to last: its duration, or its count of
// datagrams at its rate.
func (s Spec) Nominal() time.Duration {
	if s.Packets > 0 && s.RatePPS > 0 {
		return time.Duration(float64(s.Packets) / s.RatePPS * float64(time.Second))
	}
	return s.Duration
}

// now reads the run's clock.
func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// observe records a trial that ran for the time-left estimate: a trial
// asked again as the one before it was, which this host spoiled (judged
// VerdictStall), is a re-run, and so is every trial a search runs after a
// rate this host could not test (it goes on below that rate only because
// of this host: on a quiet host one 18 B search ran 8 such 10 s trials,
// and taken as what any search takes, they read the later sizes' searches
// 1.5× as long as they were). (One asked again because the far end's own
// timing failed it by a hair, the searches' rule for a reflector, is
// part of what a search of this far end takes, not the host's.)
// The verdict is told with the trial (Progress.Rerun), for RFC 2544's
// estimate of its throughput searches.
func (s *sweeper) observe(spec Spec) {
	s.rerun = s.ran && (spec == s.prev && s.stalled || s.untested)
	s.est.Trial(unitSearch, s.cfg.now(), spec.Nominal(), s.rerun)
	s.prev, s.ran, s.stalled = spec, true, false
}

// searchPrior is what a search is expected to take before one has
// finished: the multi-rate search's structure (MultiPrior); for sweep's
// own search (--packets) a trial at the highest rate, a bisection from
// half of it, and the confirmation.
func (s *sweeper) searchPrior(size int) eta.Part {
	if s.cfg.Packets == 0 {
		n, d := MultiPrior(s.cfg, size, 1)
		return eta.Part{Class: unitSearch, Trials: n, Nominal: d}
	}
	top := s.cfg.MaxPPS(size)
	p := eta.Trials(unitSearch, 1+eta.Bisect(top/2, top, s.cfg.Resolution), s.spec(size, top, false).Nominal())
	c := s.spec(size, top, true).Nominal()
	return eta.Part{Class: unitSearch, Trials: p.Trials + 1, Nominal: p.Nominal + c}
}

// searchState is where a search stands after a trial's verdict: the
// highest rate that passed (0: none), the lowest that failed (+Inf: none),
// whether the next trial confirms, and how many trials it ran.
type searchState struct {
	size       int
	lo, hi     float64
	confirming bool
	ran        int
}

// searchLeft is the work a search standing at st still needs: the trials
// that bisect what lies between lo and hi (or the highest rate) down to the
// resolution, and the confirmation; while no rate has passed, what a
// search takes in this run less what it has run. It never counts more
// trials than the search has left (Config.MaxTrials).
func (s *sweeper) searchLeft(st searchState) eta.Part {
	room := float64(s.cfg.MaxTrials - st.ran)
	if room <= 0 {
		return eta.Part{Class: unitSearch}
	}
	top := s.cfg.MaxPPS(st.size)
	short, confirm := s.spec(st.size, top, false).Nominal(), s.spec(st.size, max(st.lo, top/2), true).Nominal()
	switch {
	case st.confirming:
		return capped(eta.Part{Class: unitSearch, Trials: 1, Nominal: confirm}, room, short)
	case st.lo == 0:
		floor := eta.Part{Trials: 2, Nominal: short + confirm}
		return capped(s.est.Rest(unitSearch, unitSearch, s.searchPrior(st.size), floor), room, short)
	}
	n := eta.Bisect(st.lo, min(st.hi, top), s.cfg.Resolution)
	return capped(eta.Part{Class: unitSearch, Trials: n + 1, Nominal: time.Duration(n)*short + confirm}, room, short)
}

// capped is p cut to room trials: when its trials do not fit, the
// search runs out of them before it confirms, so those left are search
// trials, each as long as short.
func capped(p eta.Part, room float64, short time.Duration) eta.Part {
	if p.Trials <= room {
		return p
	}
	p.Trials, p.Nominal = room, time.Duration(room*float64(short))
	return p
}

// tell tells Config.OnTrial the progress of the latest trial, if not yet
// told, with the time left from where its search stands (st).
func (s *sweeper) tell(st searchState) {
	p := s.told
	if p == nil {
		return
	}
	s.told = nil
	cur := s.searchLeft(st)
	p.SearchLeft = cur
	p.Left = s.est.Left(append(eta.Work{cur}, s.after(st.size, p.Repeat)...))
	s.cfg.OnTrial(*p)
}

// after is the work after the search of size (repetition rep) under
// way: its size's later repetitions and the later sizes' searches, at what
// a search takes in this run, and the sizes bisecting the cliffs, each at
// what a search like those at the ends of its cliff takes (see sides).
func (s *sweeper) after(size, rep int) eta.Work {
	r := float64(s.cfg.Repeat)
	each := s.est.Expect(unitSearch, unitSearch, s.searchPrior(size))
	ahead, seen := s.cliffsAhead(size)
	cliffs := s.bisecting(size).plus(ahead).plus(s.noRateAhead(size, seen))
	// The later sizes' first searches, each like the searches its survey
	// trial foretells, less the survey trials already run for them (and
	// for the size under way, while the survey runs).
	later := each.Scale(float64(s.cfg.Repeat-rep) + float64(len(s.ahead))*(r-1))
	for _, z := range s.ahead {
		x := s.expected(z, each)
		later.Trials, later.Nominal = later.Trials+x.Trials, later.Nominal+x.Nominal
	}
	if u := s.surveyed(append([]int{size}, s.ahead...)); u.Trials > 0 {
		later.Trials = max(later.Trials-u.Trials, 0)
		later.Nominal = max(later.Nominal-u.Nominal, 0)
	}
	return eta.Work{
		later,
		s.est.Expect(searchKind(true), unitSearch, s.kindPrior(true, each)).Scale(cliffs.atMax * r),
		s.est.Expect(searchKind(false), unitSearch, s.kindPrior(false, each)).Scale(cliffs.below * r),
	}
}

// bisecting is how many sizes bisecting the cliffs found so far are
// expected to take after size's search: bisectLeft, but once the middle
// size of a cliff being bisected is judged (its search ended), from the
// half it leaves the cliff in, or none when the bisection stops there.
func (s *sweeper) bisecting(size int) sides {
	if s.cut == nil {
		return s.bisectLeft
	}
	sr, judged := s.done[size], true
	if sr == nil && s.overload.size == size && s.overload.pps > 0 {
		// Its search under way failed a trial: it finds no rate above
		// what the far end delivered then, which may already tell the
		// half (the most it delivered stays clear of the size below).
		sr, judged = &result.SweepSize{Size: size, RatePPS: s.overload.pps}, false
	}
	if sr == nil {
		return s.bisectLeft
	}
	b, a, stop := narrow(s.cut.below, sr, s.cut.above, s.cfg.CliffDrop)
	switch {
	case stop != "" && judged:
		return s.laterBisect
	case stop != "":
		return s.bisectLeft
	}
	c := result.SweepCliff{Below: b.Size, Above: a.Size}
	return s.laterBisect.plus(s.split(c, s.cliffSizes(c)))
}

// halves is how many sizes bisecting the cliff between below and above
// are expected to take after mid, the size being searched: the cliff lies
// in either half alike, and the bisection goes on past mid as often as a
// step does (see cliffSizes).
func (s *sweeper) halves(below, mid, above int) sides {
	var out sides
	for _, c := range []result.SweepCliff{{Below: below, Above: mid}, {Below: mid, Above: above}} {
		out = out.plus(s.split(c, s.goesOn()*s.cliffSizes(c)/2))
	}
	return out
}

// kindPrior is what a search that ends at the highest rate
// (atMax) or below it is expected to take before one has: one that
// passes its first trial there measures it once in each later phase, at
// that phase's length (the structure of the multi-rate search, which
// each, what any search takes, does not tell apart); one below it as any
// search.
func (s *sweeper) kindPrior(atMax bool, each eta.Part) eta.Part {
	if !atMax || s.cfg.Packets > 0 {
		return each
	}
	mc := mlrsearch.Config{Initial: s.cfg.Trial, Final: max(s.cfg.Confirm, s.cfg.Trial), Phases: Phases}
	if mc.Final <= mc.Initial {
		return eta.Trials(unitSearch, 1, mc.Initial) // a pass is its own confirmation
	}
	p := eta.Part{Class: unitSearch}
	for k := range Phases + 1 {
		p.Trials++
		p.Nominal += mc.Duration(k)
	}
	return p
}

// searchKind is the eta unit a search also closes as, by whether it ended
// at the highest rate (atMax; a search that passes its first trial there
// takes a few trials, one that fails it takes a bisection and more).
func searchKind(atMax bool) string {
	if atMax {
		return "search at the highest rate"
	}
	return "search below the highest rate"
}

// sides are sizes bisecting cliffs, counted by the search they are
// expected to take: a size inside a cliff forwards as one of its ends
// does, so its search takes what a search like that end's takes (atMax:
// one that ended at the highest rate; below: one that did not).
type sides struct{ atMax, below float64 }

func (a sides) plus(b sides) sides { return sides{a.atMax + b.atMax, a.below + b.below} }

// split is n sizes bisecting c, half like each of its ends' searches (a
// bisection's sizes fall on either side of the step alike).
func (s *sweeper) split(c result.SweepCliff, n float64) sides {
	var out sides
	for _, z := range []int{c.Below, c.Above} {
		if sr := s.done[z]; (sr != nil && sr.AtMax) || (sr == nil && s.looked[z].atMax) {
			out.atMax += n / 2
		} else {
			out.below += n / 2 // the size under way: its search failed a trial
		}
	}
	return out
}

// bisections is the sizes bisecting the cliffs cs are expected to take
// (see cliffSizes), by side (see split).
func (s *sweeper) bisections(cs []result.SweepCliff) sides {
	var n sides
	for _, c := range cs {
		n = n.plus(s.split(c, s.cliffSizes(c)))
	}
	return n
}

// cliffSizes is how many sizes bisecting the cliff c is expected to take.
// A cliff is taken to be one step (what bisecting it looks for: a buffer
// that holds one datagram fewer), which keeps the whole fall in one half
// of the interval every time, down to the byte: log2 of its width in
// bytes (a bisection of L bytes takes the whole or the next whole number
// of steps under or over log2 L, as the step lies). But a size this host
// cannot send at its rate stops the bisection (it tells neither side):
// each step goes on only as often as goesOn says.
func (s *sweeper) cliffSizes(c result.SweepCliff) float64 {
	if c.Above-c.Below <= 1 {
		return 0
	}
	n, q := math.Log2(float64(c.Above-c.Below)), s.goesOn()
	if q >= 1 {
		return n
	}
	return (1 - math.Pow(q, n)) / (1 - q)
}

// goesOn is the chance that a bisection goes on past a size, which it
// does unless this host could not send that size's rate: the share of the
// sizes done so far that this host did not limit, counted as if a quarter
// of a limited size were among half a size more (so that a run with none
// limited yet does not take it as certain, and one with none done takes it
// as even). The rule before, one of each assumed (Laplace's), stopped a
// quiet host's bisection at each size one time in five after three sizes,
// and so expected about half of the 8 steps a buffer's cliff took.
func (s *sweeper) goesOn() float64 {
	limited := 0
	for _, sr := range s.done {
		if unbounded(sr) {
			limited++
		}
	}
	return 1 - (float64(limited)+0.25)/(float64(len(s.done))+0.5)
}

// noRateAhead is how many sizes bisecting cliffs not yet seen are
// expected to take, from the planned sizes whose searches have not ended
// (size, under way, and those after it): a size whose search finds no
// rate at all is a cliff from the size below it when that one found a
// rate (its byte rate falls to nothing), and this run's sizes have found
// none as often as those done so far did (not at all while none has: a
// run whose sizes all found a rate expects no such cliff). The size under
// way from the size below it as found; a later one as likely to follow a
// size that found a rate as the run's share says; neither where a cliff
// is seen above the size before it (seen: cliffsAhead counts those).
func (s *sweeper) noRateAhead(size int, seen map[int]bool) sides {
	if s.cfg.NoBisect || len(s.done) == 0 || s.ahead == nil {
		return sides{}
	}
	none := 0
	var below *result.SweepSize
	for z, sr := range s.done {
		if sr.RatePPS <= 0 && !unbounded(sr) {
			none++
		}
		if z < size && (below == nil || z > below.Size) {
			below = sr
		}
	}
	p := float64(none) / float64(len(s.done))
	if p == 0 {
		return sides{}
	}
	var out sides
	prev, rated := 0, 0.0 // the size before, and the chance it found a rate
	if below != nil && below.RatePPS > 0 && !unbounded(below) {
		prev, rated = below.Size, 1
	}
	for _, z := range append([]int{size}, s.ahead...) {
		if prev > 0 && rated > 0 && !seen[z] { // a cliff seen is counted already
			c := result.SweepCliff{Below: prev, Above: z}
			out = out.plus(s.split(c, rated*p*s.cliffSizes(c)))
		}
		prev, rated = z, 1-p
	}
	return out
}

// overload is the highest rate a size's trials that failed on the far end
// saw it deliver: what it forwards when offered more than it takes.
type overload struct {
	size int
	pps  float64
}

// sawOverload keeps what a trial of size that failed on the far end saw
// it deliver (see overload).
func (s *sweeper) sawOverload(size int, v string, o result.SweepOutcome) {
	if s.overload.size != size {
		s.overload = overload{size: size}
	}
	if v == VerdictPass || v == VerdictStall || v == VerdictHost {
		return
	}
	s.overload.pps = max(s.overload.pps, delivered(v, o))
}

// cliffsAhead is how many sizes bisecting the cliffs under the planned
// sizes not yet done (size, the largest so far, whose search is under
// way, and those after it) are expected to take, and which sizes are
// above such a cliff. A search finds no rate above what the far end
// forwarded when offered more, which its first trial, at the highest
// rate, measures (the survey ran it for every planned size): where that
// falls from the size below by more than Config.CliffDrop, the cliff the
// search will end in is known before the search. The size under way is
// taken at the most its failed trials saw it deliver (sawOverload), else
// as its survey trial saw it, a later size as its survey trial saw it (the
// rate it passed at the highest rate, or what the far end delivered when
// it failed); a size whose survey trial this host spoiled tells nothing.
// Counting a cliff from here, not from the search's end, lets the
// estimate rise early and over several updates (2× at most each); a
// search that ends higher than it forwarded drops the term then.
func (s *sweeper) cliffsAhead(size int) (sides, map[int]bool) {
	if s.cfg.NoBisect {
		return sides{}, nil
	}
	var below *result.SweepSize
	for z, sr := range s.done {
		switch {
		case z > size:
			return sides{}, nil // a size between two done: bisecting, or out of order
		case z < size && (below == nil || z > below.Size):
			below = sr
		}
	}
	var out sides
	seen := map[int]bool{}
	prev := below
	for _, z := range append([]int{size}, s.ahead...) {
		var cur *result.SweepSize
		if l, ok := s.looked[z]; ok {
			cur = &result.SweepSize{Size: z, RatePPS: l.pps}
		}
		if z == size && s.overload.size == size && s.overload.pps > 0 {
			cur = &result.SweepSize{Size: z, RatePPS: s.overload.pps}
		}
		if prev != nil && cur != nil && isCliff(prev, cur, s.cfg.CliffDrop) {
			c := result.SweepCliff{Below: prev.Size, Above: z}
			out = out.plus(s.split(c, s.cliffSizes(c)))
			seen[z] = true
		}
		prev = cur
	}
	return out, seen
}
