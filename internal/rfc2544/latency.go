package rfc2544

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// latency times every datagram at each load (a share of the NDR), each
// point from result.RFC2544Schedule.LatencyRepeats trials whose statistics are averaged.
func (b *bench) latency(ctx context.Context, sr *result.RFC2544Size) error {
	if b.cfg.Latency == "" {
		sr.LatencyNote = b.cfg.NoLatency
		return nil
	}
	if sr.NDRPPS <= 0 {
		sr.LatencyNote = "no NDR was found, so there is no load to measure the latency at"
		sr.Warnings = append(sr.Warnings, "latency: "+sr.LatencyNote)
		return nil
	}
	sr.LatencyNote = latencyNotes[b.cfg.Latency]
	for _, load := range b.cfg.Loads {
		p, err := b.latencyPoint(ctx, sr, load)
		if err != nil || ctx.Err() != nil {
			return err
		}
		sr.Latency = append(sr.Latency, p)
	}
	return nil
}

// latencyPoint measures one load.
func (b *bench) latencyPoint(ctx context.Context, sr *result.RFC2544Size, load float64) (result.RFC2544LatencyPoint, error) {
	reps := max(b.cfg.Schedule.LatencyRepeats, 1)
	p := result.RFC2544LatencyPoint{LoadPercent: load, RatePPS: sr.NDRPPS * load / 100, Kind: b.cfg.Latency, Repeats: reps,
		TrialS: b.cfg.Schedule.Latency.Seconds(), Histogram: []result.RTTBin{}}
	cs, co, reuse := b.confirmTrial(sr)
	if reuse = reuse && load == 100; reuse {
		// The NDR's confirming trial: at the rate it asked (the NDR is
		// what the far end delivered of it), for its length.
		p.RatePPS, p.TrialS, p.FromThroughput = cs.RatePPS, cs.Duration.Seconds(), true
	}
	all := []result.RTTBin{}
	var sums [7]float64
	got := 0 // repeats that gave figures
	for i := 1; i <= reps; i++ {
		o := co
		if !reuse {
			spec := sweep.Spec{Size: sr.Size, RatePPS: p.RatePPS, Duration: b.cfg.Schedule.Latency}
			var err error
			o, err = b.trial(ctx, result.RFC2544TestLatency, spec, func(o result.SweepOutcome) string {
				return fmt.Sprintf("%.0f %% of NDR (%.0f/s), trial %d of %d: %d timed", load, p.RatePPS, i, reps, timed(o))
			})
			if err != nil || ctx.Err() != nil {
				return p, err
			}
		}
		p.Sent += o.Sent
		p.Lost += o.Lost + o.Unreported
		p.OfferedPPS += o.OfferedPPS / float64(reps)
		if o.SendErrors > 0 || o.OfferedPPS < 0.99*p.RatePPS {
			p.HostLimited = true
		}
		stats, ok := b.trialStats(o, &all)
		if !ok {
			continue
		}
		got++
		p.Timed += timed(o)
		for k, v := range stats {
			sums[k] += v
		}
	}
	if got > 0 {
		for k := range sums {
			sums[k] /= float64(got)
		}
	}
	p.MinMS, p.MeanMS, p.P50MS, p.P90MS, p.P99MS, p.P999MS, p.MaxMS = sums[0], sums[1], sums[2], sums[3], sums[4], sums[5], sums[6]
	if b.cfg.Latency == result.RFC2544RoundTrip {
		p.Histogram = all
	}
	b.latencyWarnings(sr, p, load, got, reps)
	return p, nil
}

// trialStats are one trial's min, mean, p50, p90, p99, p99.9 and max in
// ms (the mean 0 for the transit kinds), the round trips also recorded in
// all; ok is false when the trial timed nothing.
func (b *bench) trialStats(o result.SweepOutcome, all *[]result.RTTBin) (st [7]float64, ok bool) {
	if b.cfg.Latency != result.RFC2544RoundTrip {
		tr := o.Transit
		if tr == nil || tr.Count == 0 {
			return st, false
		}
		var base int64
		if b.cfg.Latency == result.RFC2544DelayVariation {
			base = tr.Min
		}
		for k, v := range []int64{tr.Min, 0, tr.P50, tr.P90, tr.P99, tr.P999, tr.Max} {
			if k != 1 {
				st[k] = float64(v-base) / 1e3
			}
		}
		return st, true
	}
	s := o.RTTDist
	if s == nil || s.Count == 0 {
		return st, false
	}
	*all = mergeBins(*all, s.Bins)
	return [7]float64{s.Min, s.Mean, s.P50, s.P90, s.P99, s.P999, s.Max}, true
}

// mergeBins adds the counts of bins b to a's: both are echo's coarse bins,
// whose edges are fixed (20 a decade), in ascending order.
func mergeBins(a, b []result.RTTBin) []result.RTTBin {
	out := make([]result.RTTBin, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].From < b[0].From):
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0].From < a[0].From:
			out, b = append(out, b[0]), b[1:]
		default:
			m := a[0]
			m.Count += b[0].Count
			out, a, b = append(out, m), a[1:], b[1:]
		}
	}
	return out
}

// timed is how many datagrams a trial timed.
func timed(o result.SweepOutcome) int64 {
	if o.Transit != nil {
		return o.Transit.Count
	}
	if o.RTTDist != nil {
		return o.RTTDist.Count
	}
	return 0
}

// latencyWarnings says what makes a point doubtful.
func (b *bench) latencyWarnings(sr *result.RFC2544Size, p result.RFC2544LatencyPoint, load float64, got, reps int) {
	switch {
	case got == 0 && b.cfg.Latency == result.RFC2544RoundTrip:
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("latency at %.0f %% of NDR: nothing came back to time", load))
	case got == 0:
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("latency at %.0f %% of NDR: the server's report carried no transit times (an iperf 2 server, a wirebench server older than the transit summary, or no report came back): nothing was timed", load))
	case got < reps:
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("latency at %.0f %% of NDR: only %d of %d trials timed anything: the figures are the average of those", load, got, reps))
	}
	if b.cfg.Latency == result.RFC2544OneWay && p.MinMS < 0 {
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("latency at %.0f %% of NDR: a transit below zero (min %.3f ms): the two ends do not read the same clock after all, so these figures are not one-way latency", load, p.MinMS))
	}
	if p.HostLimited {
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("latency at %.0f %% of NDR: this host offered %.0f/s of the %.0f/s asked: the load was lower than named", load, p.OfferedPPS, p.RatePPS))
	}
	if p.Lost > 0 {
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("latency at %.0f %% of NDR: %d of %d datagrams were lost (the NDR lost none): the latency of what was lost is not in the figures", load, p.Lost, p.Sent))
	}
}
