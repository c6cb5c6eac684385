package rfc2544

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/sweep"
)

// latency times every datagram at each load (a share of the NDR), each
// point from Schedule.LatencyRepeats trials whose statistics are averaged.
func (b *bench) latency(ctx context.Context, sr *SizeResult) error {
	if b.cfg.Latency == "" {
		sr.LatencyNote = b.cfg.NoLatency
		return nil
	}
	if sr.NDRPPS <= 0 {
		sr.LatencyNote = "no NDR was found, so there is no load to measure the latency at"
		sr.Warnings = append(sr.Warnings, "latency: "+sr.LatencyNote)
		return nil
	}
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
func (b *bench) latencyPoint(ctx context.Context, sr *SizeResult, load float64) (LatencyPoint, error) {
	reps := max(b.cfg.Schedule.LatencyRepeats, 1)
	p := LatencyPoint{LoadPercent: load, RatePPS: sr.NDRPPS * load / 100, Kind: b.cfg.Latency, Repeats: reps}
	all := echo.NewRecorder()
	var sums [7]float64
	for i := 1; i <= reps; i++ {
		spec := sweep.Spec{Size: sr.Size, RatePPS: p.RatePPS, Duration: b.cfg.Schedule.Latency}
		rec := echo.NewRecorder()
		o, err := b.trial(ctx, TestLatency, spec, func(o sweep.Outcome) string {
			return fmt.Sprintf("%.0f %% of NDR (%.0f/s), trial %d of %d: %d timed", load, p.RatePPS, i, reps, len(o.RTTs))
		})
		if err != nil || ctx.Err() != nil {
			return p, err
		}
		for _, d := range o.RTTs {
			rec.Record(d)
			all.Record(d)
		}
		p.Sent += o.Sent
		p.Lost += o.Lost + o.Unreported
		p.OfferedPPS += o.OfferedPPS / float64(reps)
		if o.SendErrors > 0 || o.OfferedPPS < 0.99*p.RatePPS {
			p.HostLimited = true
		}
		s := rec.Summary()
		for k, v := range []float64{s.Min, s.Mean, s.P50, s.P90, s.P99, s.P999, s.Max} {
			sums[k] += v / float64(reps)
		}
	}
	p.MinMS, p.MeanMS, p.P50MS, p.P90MS, p.P99MS, p.P999MS, p.MaxMS = sums[0], sums[1], sums[2], sums[3], sums[4], sums[5], sums[6]
	p.Histogram = all.Summary().Bins
	if all.Count() == 0 {
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("latency at %.0f %% of NDR: nothing came back to time", load))
	}
	if p.HostLimited {
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("latency at %.0f %% of NDR: this host offered %.0f/s of the %.0f/s asked: the load was lower than named", load, p.OfferedPPS, p.RatePPS))
	}
	if p.Lost > 0 {
		sr.Warnings = append(sr.Warnings, fmt.Sprintf("latency at %.0f %% of NDR: %d of %d datagrams were lost (the NDR lost none): the latency of what was lost is not in the figures", load, p.Lost, p.Sent))
	}
	return p, nil
}
