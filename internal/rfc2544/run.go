package rfc2544

import (
	"context"
	"fmt"
	"github.com/wirebench/wirebench/internal/priority"
	"slices"
	"time"

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
	// (from the schedule, scaled by how the run has kept to it).
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
	b := &bench{cfg: cfg, r: r, start: time.Now()}
	b.planned = time.Duration(len(sizes)) * b.perSize()
	var err error
	for _, size := range sizes {
		sr := result.RFC2544Size{Size: size, LinePPS: cfg.LinePPS(size), Latency: []result.RFC2544LatencyPoint{}, LossCurve: []result.RFC2544LossPoint{}, Done: []string{}, Warnings: []string{}}
		err = b.size(ctx, &sr)
		if len(sr.Done) > 0 || err == nil {
			res.Sizes = append(res.Sizes, sr)
		}
		if err != nil || ctx.Err() != nil {
			break
		}
	}
	res.Seconds = time.Since(b.start).Seconds()
	// One line per cause over the run; each size's own warnings stay in
	// its "warnings" (the detail).
	res.Warnings = append(res.Warnings, findings.Texts(findings.Of(res))...)
	pacing = priority.Summary().Since(pacing)
	res.SenderPacing = pacing.String()
	if a := pacing.StallAdvice(); a != "" && hostSpoiled(res.Sizes) {
		res.Warnings = append(res.Warnings, a)
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
	planned time.Duration // the schedule's estimate of the whole run
	spent   time.Duration // the schedule's estimate of what is done
	started bool
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
		b.spent += b.estimate(t)
	}
	return nil
}

// estimate is what the schedule expects one test of one size to take.
func (b *bench) estimate(test string) time.Duration {
	s, gap := b.cfg.Schedule, b.cfg.Gap
	switch test {
	case result.RFC2544TestThroughput:
		return 9*(s.Search+gap) + s.Confirm + gap
	case result.RFC2544TestLatency:
		if b.cfg.Latency == "" {
			return 0
		}
		return time.Duration(len(b.cfg.Loads)*s.LatencyRepeats) * (s.Latency + gap)
	case result.RFC2544TestLoss:
		return 5 * (s.Loss + gap)
	case result.RFC2544TestBackToBack:
		return time.Duration(s.BurstRepeats) * 14 * (gap + 300*time.Millisecond)
	}
	return 0
}

func (b *bench) perSize() time.Duration {
	var d time.Duration
	for _, t := range b.cfg.Tests {
		d += b.estimate(t)
	}
	return d
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
	o, err := b.r.Trial(ctx, s)
	if err != nil {
		return o, fmt.Errorf("trial of %d B at %.0f datagrams/s: %w", s.Size, s.RatePPS, err)
	}
	if ctx.Err() == nil {
		b.progress(test, s.Size, what(o))
	}
	return o, nil
}

// progress reports a trial with an estimate of the time left.
func (b *bench) progress(test string, size int, what string) {
	if b.cfg.OnProgress == nil {
		return
	}
	el := time.Since(b.start)
	left := b.planned - b.spent
	if b.spent > 0 {
		// Scale the schedule by how the finished tests kept to it.
		left = time.Duration(float64(left) * float64(el) / float64(b.spent))
	}
	b.cfg.OnProgress(Progress{Test: test, Size: size, What: what, Elapsed: el, Left: max(left, 0)})
}

// hostSpoiled says whether this host's sender spoiled a trial or a burst
// of sizes.
func hostSpoiled(sizes []result.RFC2544Size) bool {
	for _, sr := range sizes {
		if sr.DiscountedTrials > 0 || sr.NDR.LimitedByHost || sr.BackToBack != nil && sr.BackToBack.HostSpoiled {
			return true
		}
	}
	return false
}
