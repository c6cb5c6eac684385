package rfc2544

import (
	"context"
	"fmt"
	"github.com/wirebench/wirebench/internal/priority"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/eta"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544/findings"
	"github.com/wirebench/wirebench/internal/sweep"
)

// Progress is where a run is, for a progress line.
type Progress struct {
	Test string
	Size int
	// What is the trial in words ("NDR 3 at 8120/s: pass").
	What string
	// Elapsed is the run's time so far, Left an estimate of what remains
	// (internal/eta: the trials the tests still need, from their
	// structure, at the cost per trial measured so far).
	Elapsed, Left time.Duration
}

// Run runs cfg's tests for every size with r into res (made by
// NewResult), size by size. When ctx ends it stops after the trial under
// way, keeps what finished and marks res interrupted; an error from the
// runner ends the run with what finished kept and res.Error set.
func Run(ctx context.Context, cfg Config, r sweep.Runner, res *result.RFC2544) error {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	res.Test.Tests, res.Test.Loads, res.Test.Schedule, res.Test.PDRPercent = cfg.Tests, cfg.Loads, cfg.Schedule, cfg.PDRPercent
	sizes := slices.Compact(slices.Sorted(slices.Values(cfg.Sizes)))
	res.Test.Sizes = sizes
	pacing := priority.Summary()
	b := &bench{cfg: cfg, r: r, start: cfg.now()}
	b.est = eta.New(b.start)
	var err error
	for i, size := range sizes {
		b.sizesAfter = sizes[i+1:]
		b.later, b.kept = nil, nil
		sr := result.RFC2544Size{Size: size, LinePPS: cfg.LinePPS(size), Latency: []result.RFC2544LatencyPoint{}, LossCurve: []result.RFC2544LossPoint{}, Done: []string{}, Warnings: []string{}}
		err = b.size(ctx, &sr)
		if len(sr.Done) > 0 || err == nil {
			res.Sizes = append(res.Sizes, sr)
		}
		if err != nil || ctx.Err() != nil {
			break
		}
	}
	res.Seconds = cfg.now().Sub(b.start).Seconds()
	// One line per cause over the run; each size's own warnings stay in
	// its "warnings" (the detail).
	res.Warnings = append(res.Warnings, findings.Texts(findings.Of(res))...)
	var advice string
	res.SenderPacing, advice = priority.RunReport(pacing, hostSpoiled(res.Sizes))
	if advice != "" {
		res.Warnings = append(res.Warnings, advice)
	}
	if ctx.Err() != nil {
		res.Interrupted = true
		res.Warnings = append(res.Warnings, "the run was interrupted: only the sizes and tests shown were finished (a size's \"done\" lists its finished tests)")
		return nil
	}
	if err != nil {
		res.Error = err.Error()
	}
	return err
}

// bench is one run under way.
type bench struct {
	cfg     Config
	r       sweep.Runner
	start   time.Time
	started bool
	// The time-left estimate: the trial before (a re-run asks it
	// again) and the sizes after the one under way.
	est        *eta.Estimator
	prev       sweep.Spec
	ran        bool
	stalled    bool // this host spoiled the trial before (see observe)
	sizesAfter []int
	// ndrShare is the latest NDR found, as a share of its size's line
	// rate (0: none yet): what a burst search is expected to meet.
	ndrShare float64
	// kept are the size's throughput search trials its later tests may
	// take as their own (see keeper).
	kept *keeper
	// later runs the size's trials after its throughput search (b.r
	// with the wait for late answers that search showed, waitLate).
	later sweep.Runner
}

// size runs every test asked for on one size, in RFC 2544's order.
func (b *bench) size(ctx context.Context, sr *result.RFC2544Size) error {
	for _, t := range b.cfg.Tests {
		var err error
		switch t {
		case result.RFC2544TestThroughput:
			err = b.throughput(ctx, sr)
		case result.RFC2544TestLatency:
			err = b.latency(ctx, sr)
		case result.RFC2544TestLoss:
			err = b.loss(ctx, sr)
		case result.RFC2544TestBackToBack:
			err = b.backToBack(ctx, sr)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("%s test at %d B: %w", t, sr.Size, err)
		}
		sr.Done = append(sr.Done, t)
		if t != result.RFC2544TestThroughput {
			b.est.Unit(t) // its searches are units of their own
		}
	}
	return nil
}

// trial runs one trial after the gap that lets queues drain, and reports
// progress.
func (b *bench) trial(ctx context.Context, test string, s sweep.Spec, what func(o result.SweepOutcome) string) (result.SweepOutcome, error) {
	if b.started {
		if err := b.cfg.Sleep(ctx, b.cfg.Gap); err != nil {
			return result.SweepOutcome{}, err
		}
	}
	b.started = true
	r := b.later
	if r == nil {
		r = b.r
	}
	o, err := r.Trial(ctx, s)
	if err != nil {
		return o, fmt.Errorf("trial of %d B at %.0f datagrams/s: %w", s.Size, s.RatePPS, err)
	}
	b.observe(test, s, false)
	if ctx.Err() == nil {
		b.progress(test, s.Size, what(o), eta.Part{})
	}
	return o, nil
}

// progress reports a trial with an estimate of the time left; search is
// what the throughput search under way still needs.
func (b *bench) progress(test string, size int, what string, search eta.Part) {
	if b.cfg.OnProgress == nil {
		return
	}
	el := b.cfg.now().Sub(b.start)
	left := b.est.Left(b.left(test, size, search))
	b.cfg.OnProgress(Progress{Test: test, Size: size, What: what, Elapsed: el, Left: left})
}

// hostSpoiled says whether this host's sender spoiled a trial or a burst
// of sizes.
func hostSpoiled(sizes []result.RFC2544Size) bool {
	for _, sr := range sizes {
		if sr.DiscountedTrials > 0 || sr.NDR != nil && sr.NDR.LimitedByHost || sr.BackToBack != nil && sr.BackToBack.HostSpoiled {
			return true
		}
	}
	return false
}
