package rfc2544

import (
	"math"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/eta"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// unitThroughput is the time-left estimate's unit of the throughput
// test's search (NDR and PDR at once); the other tests of one size are
// units named as the tests are.
const unitThroughput = "throughput"

// now reads the run's clock.
func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// observe records a trial of test that ran, for the time-left estimate;
// stalled says this host spoiled it. A trial asked again as the one before
// it was is a re-run when this host spoiled that one (a host stall's) or
// it is a burst (sent again only when this host spoiled or slowed it); a
// latency test's repeats are the schedule's, part of what it takes. (A
// throughput search's trials are the search's to judge: observeSearch.)
func (b *bench) observe(test string, s sweep.Spec, stalled bool) {
	b.record(test, s, stalled, b.ran && s == b.prev && (b.stalled || test == result.RFC2544TestBackToBack))
}

// observeSearch records a throughput trial that ran: a re-run as the
// search judged it (sweep's Progress.Rerun: after a host stall, or below a
// rate this host could not test; a trial asked again because the far
// end's own timing failed it by a hair is the search's rule for a
// reflector, part of what it takes).
func (b *bench) observeSearch(p sweep.Progress) {
	b.record(result.RFC2544TestThroughput, p.Spec, slices.Contains(p.Verdicts, sweep.VerdictStall), p.Rerun)
}

// record counts a trial of test in the estimate.
func (b *bench) record(test string, s sweep.Spec, stalled, rerun bool) {
	b.est.Trial(class(test), b.cfg.now(), s.Nominal(), rerun)
	b.prev, b.ran, b.stalled = s, true, stalled
}

// class is the eta class of test's trials: the throughput test's are a
// search's.
func class(test string) string {
	if test == result.RFC2544TestThroughput {
		return "search"
	}
	return test
}

// prior is what the unit of kind is expected to take at size before one
// has finished: the multi-rate search's structure (its trials at their
// phases' lengths and the final confirmations, sweep.MultiPrior); every
// latency trial; every loss step; and per burst search the doubling and
// the bisection up to the longest burst.
func (b *bench) prior(kind string, size int) eta.Part {
	s := b.cfg.Schedule
	switch kind {
	case unitThroughput:
		n, d := sweep.MultiPrior(b.searchConfig(nil), size, 2)
		return eta.Part{Trials: n, Nominal: d}
	case result.RFC2544TestLatency:
		if b.cfg.Latency == "" {
			return eta.Part{}
		}
		n := len(b.cfg.Loads) * max(s.LatencyRepeats, 1)
		if s.LatencyFromConfirm && s.LatencyRepeats <= 1 && slices.Contains(b.cfg.Loads, 100) {
			n-- // the NDR's confirming trial
		}
		return eta.Trials(kind, float64(n), s.Latency)
	case result.RFC2544TestLoss:
		return eta.Trials(kind, b.lossSteps(), s.Loss)
	case result.RFC2544TestBackToBack:
		return burstPrior(max(s.MaxBurst, 2), b.ndrShare, b.cfg.LinePPS(size)).Scale(float64(max(s.BurstRepeats, 1)))
	}
	return eta.Part{}
}

// burstPrior is what a burst search (burstSearch) is expected to take
// before one has finished, at line rate line, with bursts of at most
// maxN frames, when the latest NDR found was ndr of the line rate (0: none
// yet). A device that forwards at line rate (an NDR of 99 % of it or more,
// or none known) takes every burst: the search doubles from 16 frames to
// the cap and stops there. One that forwards less loses once its queue
// overflows, at a length nothing measured so far tells; it is taken at
// the middle of the doublings (the geometric mean of 16 and the cap), and
// the search bisects between it and its half after the doubling that lost.
func burstPrior(maxN int64, ndr, line float64) eta.Part {
	n := maxN
	if ndr > 0 && ndr < 0.99 {
		n = min(int64(math.Sqrt(16*float64(maxN))), maxN)
	}
	var trials, frames float64
	for f := min(int64(16), maxN); ; f = min(2*f, maxN) {
		trials, frames = trials+1, frames+float64(f)
		if f >= n || f >= maxN {
			break
		}
	}
	if n < maxN {
		k := eta.BisectInt(n/2, n)
		trials, frames = trials+k, frames+k*0.75*float64(n)
	}
	return eta.Part{Trials: trials, Nominal: time.Duration(frames / line * float64(time.Second))}
}

// lossSteps is how many steps the frame loss test takes at most: 100 %
// of line down to 10 %.
const lossSteps = 10

// lossSteps is how many steps the frame loss test runs at most: lossSteps
// but the one at the medium's maximum rate when the throughput search's
// first trial is it (as long as a step).
func (b *bench) lossSteps() float64 {
	if b.cfg.has(result.RFC2544TestThroughput) && b.cfg.Schedule.Search == b.cfg.Schedule.Loss {
		return lossSteps - 1
	}
	return lossSteps
}

// unitsOf is the eta units test runs as.
func unitsOf(test string) []string {
	if test == result.RFC2544TestThroughput {
		return []string{unitThroughput}
	}
	return []string{test}
}

// expect is what test takes at a size not yet begun.
func (b *bench) expect(test string, size int) eta.Work {
	var w eta.Work
	for _, u := range unitsOf(test) {
		w = append(w, b.est.Expect(u, class(test), b.prior(u, size)))
	}
	return w
}

// left is the work the run has left after a trial of test at size: the
// rest of the test under way (search is what the throughput search under
// way still needs), the size's later tests and the later sizes' tests.
func (b *bench) left(test string, size int, search eta.Part) eta.Work {
	var w eta.Work
	switch test {
	case result.RFC2544TestThroughput:
		w = append(w, search)
	case result.RFC2544TestLoss:
		r := b.est.Rest(test, class(test), b.prior(test, size), eta.Part{})
		if most := b.lossSteps() - b.est.Started().Trials; r.Trials > most {
			r = r.Scale(max(most, 0) / r.Trials)
		}
		w = append(w, r)
	default:
		w = append(w, b.est.Rest(test, class(test), b.prior(test, size), eta.Part{}))
	}
	later := false
	for _, t := range b.cfg.Tests {
		if later {
			w = append(w, b.expect(t, size)...)
		}
		later = later || t == test
	}
	for _, s := range b.sizesAfter {
		for _, t := range b.cfg.Tests {
			w = append(w, b.expect(t, s)...)
		}
	}
	return w
}
