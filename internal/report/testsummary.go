package report

import (
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// TestSummary is a test's one line in `history`: protocol, direction, the
// received rate (with loss and jitter for UDP) or the sent one, and whether
// it ended early or carried warnings.
func TestSummary(r *result.Result) string {
	var b strings.Builder
	b.WriteString(r.Test.Protocol + " " + r.Test.Direction)
	switch {
	case r.Receiver != nil:
		fmt.Fprintf(&b, " %s", units.FormatBits(r.Receiver.BitsPerSecond))
		if r.Test.Protocol == result.UDP {
			total := r.Receiver.Total
			if total == 0 {
				total = r.Receiver.Packets + r.Receiver.Lost
			}
			if total > 0 {
				fmt.Fprintf(&b, ", %.2f %% loss", 100*float64(r.Receiver.Lost)/float64(total))
			}
			fmt.Fprintf(&b, ", %.3f ms jitter", r.Receiver.JitterMS)
		}
	case r.Sender != nil:
		fmt.Fprintf(&b, " %s sent", units.FormatBits(r.Sender.BitsPerSecond))
	}
	if r.Error != "" {
		b.WriteString(" (ended early)")
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, " [%s]", units.Plural(len(r.Warnings), "warning"))
	}
	return b.String()
}
