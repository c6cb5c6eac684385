package rfc2544

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// loss runs the frame loss test: from the medium's maximum rate down in
// 10 % steps until two steps in a row lose nothing (or 10 % is reached). A
// step the throughput search already ran (same rate and length: its first
// trial, at the maximum rate, when the schedule's loss steps are as long as
// its search trials) is taken from it.
func (b *bench) loss(ctx context.Context, sr *result.RFC2544Size) error {
	clean := 0
	for step := 100; step >= 10 && clean < 2; step -= 10 {
		rate := sr.LinePPS * float64(step) / 100
		spec := sweep.Spec{Size: sr.Size, RatePPS: rate, Duration: b.cfg.Schedule.Loss}
		o, reused := b.kept.find(spec)
		if !reused {
			var err error
			o, err = b.trial(ctx, result.RFC2544TestLoss, spec, func(o result.SweepOutcome) string {
				return fmt.Sprintf("%d %% of line (%.0f/s): loss %.3f %%", step, rate, sweep.LossPercent(o))
			})
			if err != nil || ctx.Err() != nil {
				return err
			}
		}
		p := result.RFC2544LossPoint{OfferedPercent: float64(step), RatePPS: rate, OfferedPPS: o.OfferedPPS, Sent: o.Sent,
			Lost: o.Lost + o.Unreported, LossPercent: sweep.LossPercent(o), SendS: o.SendSeconds, SenderLagMS: o.MaxLagS * 1000,
			HostLimited: o.SendErrors > 0 || o.OfferedPPS < 0.99*rate, FromThroughput: reused}
		if p.HostLimited {
			sr.Warnings = append(sr.Warnings, fmt.Sprintf("frame loss at %d %% of line: this host offered %.0f/s of the %.0f/s asked; the loss shown is at the rate offered", step, o.OfferedPPS, rate))
		}
		if o.HostDrops > 0 {
			sr.Warnings = append(sr.Warnings, fmt.Sprintf("frame loss at %d %% of line: our own socket dropped %d datagrams (counted as lost)", step, o.HostDrops))
		}
		sr.LossCurve = append(sr.LossCurve, p)
		if p.Lost == 0 && !o.NoReport {
			clean++
		} else {
			clean = 0
		}
	}
	return nil
}
