// Package mlrsearch finds the highest rates a device carries under several
// loss criteria at once (RFC 2544's no-drop and partial-drop rates) in one
// multi-rate, duration-aware search, after the ideas of FD.io CSIT's
// MLRsearch (IETF BMWG draft-ietf-bmwg-mlrsearch): every trial's outcome
// moves the bounds of every criterion; the search runs in phases whose
// trials grow geometrically from the initial length to the final one while
// the interval each phase must narrow to halves, so that the wide early
// intervals cost short trials and only the last ones cost long ones; each
// criterion's lower bound is finally confirmed by a trial of the final
// length. A trial that passed at a shorter length is no evidence for a
// longer one (a queue may have hidden the loss) and is measured again; one
// that failed is evidence at every length (a longer trial does no better).
//
// It is pure logic: the trials are the caller's (Trial), so that it is
// tested against simulated devices in no time.
package mlrsearch

import (
	"context"
	"errors"
	"math"
	"time"
)

// Trial is one trial the search asks for.
type Trial struct {
	// Rate is the load, in the caller's unit (datagrams per second).
	Rate float64
	// Duration is how long it lasts.
	Duration time.Duration
	// Phase is the search's phase (0 first; Phases the final one), Final
	// says it is a final phase's trial (the configured full length).
	Phase int
	Final bool
	// Again counts the runs of this trial before it that were spoiled.
	Again int
}

// Outcome is what a trial showed.
type Outcome struct {
	// Pass says, per criterion (Config.Losses), whether the trial met it.
	Pass []bool
	// Spoiled says this host, not the device, spoiled the trial (our
	// sender stalled): it is run again, up to Config.Retries times, and
	// then counts as a failure that this host could not test (Untested).
	Spoiled bool
	// Delivered is the rate the device was seen carrying in a failing
	// trial (0: unknown), the search's estimate of its limit.
	Delivered float64
}

// Config is what a search does.
type Config struct {
	// Losses are the loss criteria the caller judges (Outcome.Pass), as
	// the share of a trial's load each allows lost, strictest first; the
	// search reads them only to turn what the device delivered in a
	// failing trial into its estimate of the rate that meets each.
	Losses []float64
	// Min and Max bound the rates tried; the search starts at Max.
	Min, Max float64
	// Initial and Final are the first and the last phases' trial lengths
	// (Final ≥ Initial).
	Initial, Final time.Duration
	// Phases is how many phases come before the final one (default 2:
	// with 1 s and 10 s, trials of 1 s and 3.2 s, then the 10 s final
	// ones); with Initial = Final there is one phase before the final.
	Phases int
	// Goal is the relative width each interval ends within (default
	// 0.01: the lowest failing rate at most 1 % above the highest pass).
	// Phase k of Phases narrows to Goal × 2^(Phases-1-k).
	Goal float64
	// Retries is how many times a spoiled trial is run again (default 1).
	Retries int
	// MaxTrials bounds the search (default 40).
	MaxTrials int
	// OnTrial, when set, is called after every trial with the search's
	// state once the trial has moved the bounds.
	OnTrial func(t Trial, o Outcome, s State)
}

// Bound is what the search found for one criterion.
type Bound struct {
	// Lower is the highest rate that met the criterion in a trial of the
	// final length (0: none), Upper the lowest that failed it (+Inf: none).
	Lower, Upper float64
	// Confirmed says Lower held in a final trial (else Lower is the
	// highest short pass, when the trials ran out).
	Confirmed bool
	// LowerTrial is the index in Result.Trials of the trial that set
	// Lower (-1: none).
	LowerTrial int
}

// Record is a trial that ran and what it showed.
type Record struct {
	Trial
	Outcome
	// Untested says the trial was spoiled every time it ran: it counts as
	// a failure of every criterion, but this host could not test the rate.
	Untested bool
}

// Result is a search's end.
type Result struct {
	Bounds []Bound
	Trials []Record
}

func (c *Config) defaults() {
	if c.Phases <= 0 {
		c.Phases = 2
	}
	if c.Goal <= 0 {
		c.Goal = 0.01
	}
	if c.Retries <= 0 {
		c.Retries = 1
	}
	if c.MaxTrials <= 0 {
		c.MaxTrials = 40
	}
	if c.Final < c.Initial {
		c.Final = c.Initial
	}
}

// Validate checks a configuration.
func (c *Config) Validate() error {
	switch {
	case len(c.Losses) == 0:
		return errors.New("mlrsearch: no criteria")
	case !(c.Max > 0) || math.IsInf(c.Max, 0) || c.Min < 0 || c.Min >= c.Max:
		return errors.New("mlrsearch: want 0 ≤ Min < Max")
	case c.Initial <= 0:
		return errors.New("mlrsearch: no trial length")
	}
	return nil
}

// Duration is phase k's trial length: Initial × (Final/Initial)^(k/Phases),
// the final phase's (k = Phases) Final.
func (c *Config) Duration(k int) time.Duration {
	if k >= c.Phases {
		return c.Final
	}
	r := float64(c.Final) / float64(c.Initial)
	return time.Duration(float64(c.Initial) * math.Pow(r, float64(k)/float64(c.Phases)))
}

// Width is phase k's goal: the relative width its intervals end within.
func (c *Config) Width(k int) float64 {
	if k >= c.Phases-1 {
		return c.Goal
	}
	return c.Goal * math.Pow(2, float64(c.Phases-1-k))
}

// Search runs the search with trial running each trial. It returns what it
// found when it ends, runs out of trials (Config.MaxTrials: bounds not
// confirmed) or ctx ends (an error from ctx, with what finished); an error
// from trial ends it with that error.
func Search(ctx context.Context, cfg Config, trial func(context.Context, Trial) (Outcome, error)) (Result, error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	s := &searcher{cfg: cfg}
	for s.phase = 0; s.phase <= cfg.Phases; s.phase++ {
		for {
			t, ok := s.next()
			if !ok {
				break
			}
			if len(s.recs) >= cfg.MaxTrials {
				return s.result(), nil
			}
			if err := s.run(ctx, t, trial); err != nil {
				return s.result(), err
			}
		}
	}
	return s.result(), nil
}

// searcher is one search under way.
type searcher struct {
	cfg   Config
	phase int
	recs  []Record
}

// run runs t, again while it is spoiled (up to Retries times), and records
// every run.
func (s *searcher) run(ctx context.Context, t Trial, trial func(context.Context, Trial) (Outcome, error)) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		o, err := trial(ctx, t)
		if err != nil {
			return err
		}
		if len(o.Pass) != len(s.cfg.Losses) {
			return errors.New("mlrsearch: a trial's outcome judged a different number of criteria")
		}
		r := Record{Trial: t, Outcome: o}
		if o.Spoiled && t.Again >= s.cfg.Retries {
			r.Untested = true
		}
		s.recs = append(s.recs, r)
		if s.cfg.OnTrial != nil {
			s.cfg.OnTrial(t, o, s.state())
		}
		if !o.Spoiled || r.Untested || len(s.recs) >= s.cfg.MaxTrials {
			return nil
		}
		t.Again++
	}
}
