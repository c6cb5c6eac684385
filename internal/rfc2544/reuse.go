package rfc2544

import (
	"context"
	"math"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// keeper runs the throughput search's trials and keeps the outcomes a
// later test of the same size may take as its own (see
// result.RFC2544Schedule): the trials of the confirming length, and those
// of the frame loss step's length at the medium's maximum rate. A trial
// run again (a spoiled one) replaces the one before.
type keeper struct {
	r    sweep.Runner
	keep func(sweep.Spec) bool
	got  []kept
}

type kept struct {
	spec sweep.Spec
	o    result.SweepOutcome
}

// Trial runs s and keeps its outcome when asked to.
func (k *keeper) Trial(ctx context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	o, err := k.r.Trial(ctx, s)
	if err != nil || ctx.Err() != nil || !k.keep(s) {
		return o, err
	}
	for i := range k.got {
		if same(k.got[i].spec, s) {
			k.got[i].o = o
			return o, nil
		}
	}
	k.got = append(k.got, kept{spec: s, o: o})
	return o, nil
}

// find is the kept outcome of a trial like s.
func (k *keeper) find(s sweep.Spec) (result.SweepOutcome, bool) {
	if k == nil {
		return result.SweepOutcome{}, false
	}
	for _, g := range k.got {
		if same(g.spec, s) {
			return g.o, true
		}
	}
	return result.SweepOutcome{}, false
}

// same says two trials are the same trial: size, length and rate (within
// a float's rounding).
func same(a, b sweep.Spec) bool {
	return a.Size == b.Size && a.Duration == b.Duration && a.Packets == b.Packets && math.Abs(a.RatePPS-b.RatePPS) <= 1e-9*max(a.RatePPS, b.RatePPS)
}

// newKeeper wraps r for one size's search: it keeps what this run's
// schedule and tests can reuse.
func (b *bench) newKeeper(size int) *keeper {
	s := b.cfg.Schedule
	line := b.cfg.LinePPS(size)
	latency := b.cfg.has(result.RFC2544TestLatency) && b.cfg.Latency != "" && s.LatencyFromConfirm && s.LatencyRepeats <= 1
	loss := b.cfg.has(result.RFC2544TestLoss)
	return &keeper{r: b.r, keep: func(t sweep.Spec) bool {
		return t.Packets == 0 && (latency && t.Duration == s.Confirm ||
			loss && t.Duration == s.Loss && same(t, sweep.Spec{Size: size, RatePPS: line, Duration: s.Loss}))
	}}
}

// confirmTrial is the throughput search's trial that confirmed the NDR,
// when the schedule takes the latency at 100 % from it and it was kept.
func (b *bench) confirmTrial(sr *result.RFC2544Size) (sweep.Spec, result.SweepOutcome, bool) {
	s := b.cfg.Schedule
	if !s.LatencyFromConfirm || s.LatencyRepeats > 1 || sr.NDR == nil || !sr.NDR.Confirmed || sr.NDR.TriedPPS <= 0 {
		return sweep.Spec{}, result.SweepOutcome{}, false
	}
	spec := sweep.Spec{Size: sr.Size, RatePPS: sr.NDR.TriedPPS, Duration: s.Confirm}
	o, ok := b.kept.find(spec)
	return spec, o, ok && o.Lost+o.Unreported == 0 && !o.NoReport && timed(o) > 0
}

// The bounds of the wait for late answers after the throughput search
// (lateWait).
const (
	lateWaitMin = 100 * time.Millisecond
	lateWaitMax = 500 * time.Millisecond // reflectrun's own
)

// slowest is the slowest round trip of a size's throughput trials (a
// queue that overflowed held its answers that long; this host's stalls
// only lengthen it); 0 when no trial timed one.
func slowest(ndr *result.SweepSize) time.Duration {
	worst := 0.0 // ms
	for _, t := range ndr.TrialLog {
		if t.RTT != nil {
			worst = max(worst, t.RTT.Max)
		}
	}
	return time.Duration(worst * float64(time.Millisecond))
}

// lateWait is how long a reflector's later trials at a size listen for
// late answers: four times the slowest round trip, from lateWaitMin up to
// lateWaitMax; 0 when none was timed.
func lateWait(slow time.Duration) time.Duration {
	if slow <= 0 {
		return 0
	}
	return min(max(4*slow, lateWaitMin), lateWaitMax)
}

// waitLate sets the size's later trials' wait for late answers from its
// throughput search, where the runner is a reflector's.
func (b *bench) waitLate(sr *result.RFC2544Size) {
	b.later = b.r
	rr, ok := b.r.(sweep.ReflectRunner)
	if !ok || rr.Drain != 0 || sr.NDR == nil {
		return
	}
	if d := lateWait(slowest(sr.NDR)); d > 0 {
		rr.Drain = d
		b.later, sr.LateWaitS = rr, d.Seconds()
	}
}
