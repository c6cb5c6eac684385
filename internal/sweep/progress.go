package sweep

import (
	"fmt"

	"github.com/wirebench/wirebench/internal/eta"
	"github.com/wirebench/wirebench/internal/result"
)

// Line is the progress line of a trial, as the sweep command shows it.
func (p Progress) Line() string {
	what := fmt.Sprintf("sweep: %d B", p.Size)
	if p.Bisected {
		what += " (bisecting a cliff)"
	}
	if p.Repeat > 1 {
		what += fmt.Sprintf(" repeat %d", p.Repeat)
	}
	trial := fmt.Sprintf("trial %d", p.Trial)
	if p.Survey {
		trial = "survey trial"
	}
	line := fmt.Sprintf("%s, %s at %.0f/s: %s (sent %d, loss %.3f %%)", what, trial, p.RatePPS, p.Verdict, p.Outcome.Sent, LossPercent(p.Outcome))
	if left := p.ETA(); left > 0 {
		line += ", " + eta.Phrase(left)
	}
	return line
}

// Summary is the one line history shows for a sweep.
func Summary(r *result.Sweep) string {
	sum := fmt.Sprintf("sweep %s, %d sizes, %d cliffs", r.Test.Mode, len(r.Sizes), len(r.Cliffs))
	if r.Interrupted {
		sum += ", interrupted"
	}
	return sum
}
