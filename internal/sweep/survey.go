package sweep

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/internal/eta"
	"github.com/wirebench/wirebench/internal/result"
)

// survey runs, before any search, the trial every planned size's search
// starts with (the highest rate, one search trial long), and keeps each
// outcome for that search to use as its first trial: the same trial, run
// earlier. What each size forwards when offered more than it takes is then
// known in the first seconds, so a cliff between two sizes asked for is
// counted in the time left from the start, not from when the search of the
// size above it begins (in a sweep of 466, 978, 1234 and 1472 B against a
// buffer that holds two datagrams of 1262 B, the cliff and its 8 bisected
// sizes, more than half of the run, showed only a quarter of the way in).
// A sweep that bisects no cliff (--no-bisect, one size) has no survey.
func (s *sweeper) survey(ctx context.Context, sizes []int) error {
	if s.cfg.NoBisect || len(sizes) < 2 {
		return nil
	}
	s.first, s.looked = map[Spec]result.SweepOutcome{}, map[int]look{}
	s.ahead = sizes[1:]
	for i, size := range sizes {
		spec := s.surveySpec(size)
		o, err := s.trial(ctx, spec)
		if err != nil || ctx.Err() != nil {
			s.keepSurvey(sizes[0], ctx.Err() != nil)
			return err
		}
		s.first[spec] = o
		v := s.cfg.Verdict(spec, o)
		s.see(size, spec, v, o)
		if s.cfg.OnTrial != nil {
			p := Progress{Size: size, Trial: i + 1, Survey: true, RatePPS: spec.RatePPS, Outcome: o, Verdict: v,
				Planned: s.planned, Elapsed: s.cfg.now().Sub(s.start), Spec: spec}
			p.Left = s.est.Left(s.after(sizes[0], 0))
			s.cfg.OnTrial(p)
		}
	}
	// The survey's trials count in the searches that reuse them.
	s.est.Aside()
	return nil
}

// see keeps what a trial of size at the highest rate (spec), the first of
// its search, showed (v, o): the rate it passed, or what the far end
// delivered when it failed; nothing when our sender spoiled it (it tells
// nothing of the far end). Only with a survey: a sweep with none counts
// every search alike.
func (s *sweeper) see(size int, spec Spec, v string, o result.SweepOutcome) {
	if s.looked == nil {
		return
	}
	switch v {
	case VerdictPass:
		s.looked[size] = look{pps: spec.RatePPS, atMax: true}
	case VerdictStall, VerdictHost:
	default:
		s.looked[size] = look{pps: delivered(v, o)}
	}
}

// surveySpec is the survey's trial of size: its search's first.
func (s *sweeper) surveySpec(size int) Spec { return s.spec(size, s.cfg.MaxPPS(size), false) }

// keepSurvey keeps, when the survey was stopped (interrupted, or by an
// error), its trial of first (the first size searched) as the unfinished
// search's (its first trial); a warning counts the others, which no search
// used.
func (s *sweeper) keepSurvey(first int, interrupted bool) {
	spec := s.surveySpec(first)
	o, ok := s.first[spec]
	if !ok {
		return
	}
	sr := &result.SweepSize{Size: first, TrialLog: []result.SweepTrial{}, Interrupted: interrupted}
	if s.cfg.LinePPS != nil {
		sr.LinePPS = s.cfg.LinePPS(first)
	}
	rec := s.logTrial(sr, spec, o, s.cfg.Verdict(spec, o), first, 1, 1, false, false)
	if s.cfg.Packets == 0 {
		rec.Phase = 1 // the multi-rate search's first phase
	}
	s.told = nil // told when it ran
	s.res.Unfinished = sr
	if n := len(s.first) - 1; n > 0 {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("the survey had run the first trial of %d more sizes; no search used them, and they are not kept", n))
	}
}

// look is what the survey saw a size do at the highest rate: the rate it
// passed (atMax), or what the far end delivered when it failed (a search
// finds no rate above it).
type look struct {
	pps   float64
	atMax bool
}

// reuse is the survey's outcome of spec, once: the first trial of its
// size's search.
func (s *sweeper) reuse(spec Spec) (result.SweepOutcome, bool) {
	o, ok := s.first[spec]
	if !ok {
		return o, false
	}
	delete(s.first, spec)
	s.est.Reuse(spec.Nominal())
	s.prev, s.ran, s.stalled, s.reused = spec, true, false, true
	return o, true
}

// surveyed is the survey's trials of sizes that their searches have not
// used yet: work the searches left no longer need.
func (s *sweeper) surveyed(sizes []int) eta.Part {
	p := eta.Part{Class: unitSearch}
	for _, z := range sizes {
		spec := s.surveySpec(z)
		if _, ok := s.first[spec]; ok {
			p.Trials++
			p.Nominal += spec.Nominal()
		}
	}
	return p
}

// expected is what the search of a planned size not yet searched is
// expected to take: like the searches that ended at the highest rate when
// the survey saw it pass there, like those that ended below it when the
// survey saw it fail, and like any search otherwise.
func (s *sweeper) expected(size int, each eta.Part) eta.Part {
	l, ok := s.looked[size]
	if !ok {
		return each
	}
	return s.est.Expect(s.lookKind(l), unitSearch, s.lookPrior(size, l, each))
}

// unitSeen is the eta unit of a multi-rate search whose first trial (the
// survey's; a bisected size's own) failed at the highest rate and saw what the far end
// delivered: it starts just under that rate, and takes what such searches
// took in this run, or before one has its structure from there
// (multiAfter). A search whose first trial this host could not send
// (the smallest sizes on a slow host) halves from the highest rate and is
// drawn out by the host's limit: it is not one of these.
const unitSeen = "search from the rate its survey saw"

// lookKind is the eta unit that the search of a size whose first trial
// was seen doing l (see) closes as, besides unitSearch and its searchKind.
func (s *sweeper) lookKind(l look) string {
	if l.atMax || s.cfg.Packets > 0 {
		return searchKind(l.atMax)
	}
	return unitSeen
}

// lookPrior is what the search of size, whose first trial was seen doing
// l, is expected to take before a search of its kind (lookKind) has (each: what
// any search takes in this run).
func (s *sweeper) lookPrior(size int, l look, each eta.Part) eta.Part {
	if l.atMax || s.cfg.Packets > 0 {
		return s.kindPrior(l.atMax, each)
	}
	return multiAfter(s.cfg, size, l.pps)
}
