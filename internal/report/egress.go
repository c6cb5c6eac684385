package report

import (
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// queueHeldLine writes, for a UDP sender this host's egress queue held
// back (result.SenderBehind.QueueHeld), the rate the link took as a result:
// "Link took: 95.70 Mbits/sec of the 100.00 Mbits/sec asked (95.70 %): …".
// A sender held back that way is no fault of the test: its rate is the
// link's (or its shaper's), which is the finding.
func queueHeldLine(b *strings.Builder, id string, s *result.Sender) {
	bh := s.Behind
	if bh == nil || !bh.QueueHeld || !finite(bh.AskedBPS) || bh.AskedBPS <= 0 || !finite(bh.TakenBPS) {
		return
	}
	div, p := siScale(bh.AskedBPS)
	unit := " " + p + "bits/sec"
	fmt.Fprintf(b, "%s Link took: %s%s of the %s%s asked (%.2f %%, over the last %.2f s): this host's egress queue (interface or shaper) held the sender back, "+
		"so the link is slower than the rate asked; the sender waited in its send calls %.2f s and stalled %.3f s\n",
		idText(id), fixed(bh.TakenBPS, div), unit, fixed(bh.AskedBPS, div), unit, 100*bh.TakenBPS/bh.AskedBPS, bh.TakenS, bh.InSendS, bh.StalledS+deref0(bh.InSendRunDelayS))
}

// deref0 is *p, or 0 when p is nil.
func deref0(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
