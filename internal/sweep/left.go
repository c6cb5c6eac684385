package sweep

import (
	"time"

	"github.com/wirebench/wirebench/internal/eta"
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
// VerdictStall), is a re-run. (One asked again because the far end's own
// timing failed it by a hair, the searches' rule for a reflector, is
// part of what a search of this far end takes, not the host's.)
func (s *sweeper) observe(spec Spec) {
	s.est.Trial(unitSearch, s.cfg.now(), spec.Nominal(), s.ran && spec == s.prev && s.stalled)
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
	cliffs := s.bisectLeft.plus(s.cliffAhead(size)).plus(s.noRateAhead(size))
	return eta.Work{
		each.Scale(float64(s.cfg.Repeat-rep) + float64(len(s.ahead))*r),
		s.est.Expect(searchKind(true), unitSearch, each).Scale(cliffs.atMax * r),
		s.est.Expect(searchKind(false), unitSearch, each).Scale(cliffs.below * r),
	}
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
		if sr := s.done[z]; sr != nil && sr.AtMax {
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
// of the interval every time, down to the byte. But a size this host
// cannot send at its rate stops the bisection (it tells neither side):
// each step goes on only as often as the sizes so far were not
// host-limited (counted with one of each assumed, so that a run without
// any yet does not take it as certain).
func (s *sweeper) cliffSizes(c result.SweepCliff) float64 {
	limited := 0
	for _, sr := range s.done {
		if sr.LimitedByHost {
			limited++
		}
	}
	q := 1 - float64(limited+1)/float64(len(s.done)+2) // a step goes on
	n, p := 0.0, 1.0
	for range int(eta.BisectInt(int64(c.Below), int64(c.Above))) {
		n, p = n+p, p*q
	}
	return n
}

// noRateAhead is how many sizes bisecting cliffs not yet seen are
// expected to take, from the planned sizes whose searches have not ended
// (size, under way, and those after it): a size whose search finds no
// rate at all is a cliff from the size below it when that one found a
// rate (its byte rate falls to nothing), and this run's sizes have found
// none as often as those done so far did (not at all while none has: a
// run whose sizes all found a rate expects no such cliff). The size under
// way counts only while no fall shows in its trials (cliffAhead counts it
// then), from the size below it as found; a later one as likely to follow
// a size that found a rate as the run's share says.
func (s *sweeper) noRateAhead(size int) sides {
	if s.cfg.NoBisect || len(s.done) == 0 || s.ahead == nil {
		return sides{}
	}
	none := 0
	var below *result.SweepSize
	for z, sr := range s.done {
		if sr.RatePPS <= 0 && !sr.LimitedByHost {
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
	if below != nil && below.RatePPS > 0 && !below.LimitedByHost {
		prev, rated = below.Size, 1
	}
	if s.cliffAhead(size) != (sides{}) {
		rated = 0 // the size under way's cliff is counted already
	}
	for _, z := range append([]int{size}, s.ahead...) {
		if prev > 0 && rated > 0 {
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

// sawOverload keeps what a trial of a planned size (not one bisecting a
// cliff) that failed on the far end saw it deliver (see overload).
func (s *sweeper) sawOverload(size int, bisected bool, v string, o result.SweepOutcome) {
	if s.overload.size != size {
		s.overload = overload{size: size}
	}
	if bisected || v == VerdictPass || v == VerdictStall || v == VerdictHost {
		return
	}
	s.overload.pps = max(s.overload.pps, delivered(v, o))
}

// cliffAhead is how many sizes bisecting a cliff below size, the largest
// size so far whose search is under way, is expected to take, from what
// its failed trials saw it deliver: a search finds no rate above what the
// far end forwarded when offered more (its first trial, at the highest
// rate, measures that), so when that falls from the size below by more
// than Config.CliffDrop, the cliff the search will end in is known now.
// Counting it from here, not from the search's end, lets the estimate rise
// over the search's trials (2× at most each) rather than at once when
// the bisections begin; a search that ends higher than it forwarded drops
// the term then. 0 while no such fall shows.
func (s *sweeper) cliffAhead(size int) sides {
	if s.cfg.NoBisect || s.overload.size != size || !(s.overload.pps > 0) {
		return sides{}
	}
	var below *result.SweepSize
	for z, sr := range s.done {
		switch {
		case z > size:
			return sides{} // a size between two done: bisecting, or out of order
		case z < size && (below == nil || z > below.Size):
			below = sr
		}
	}
	if below == nil || !isCliff(below, &result.SweepSize{Size: size, RatePPS: s.overload.pps}, s.cfg.CliffDrop) {
		return sides{}
	}
	c := result.SweepCliff{Below: below.Size, Above: size}
	return s.split(c, s.cliffSizes(c))
}
