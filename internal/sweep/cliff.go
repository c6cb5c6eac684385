package sweep

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// byteRate is a size's rate in payload bytes per second.
func byteRate(sr *result.SweepSize) float64 { return sr.RatePPS * float64(sr.Size) }

// unbounded says whether this host's limit hides where sr's far end fails:
// the size is limited by this host and the far end was seen failing at no
// rate within 5 % above the rate tried. A size limited by this host whose
// far end did fail that close is a lower bound within 5 % of its limit,
// close enough to show a fall of a fifth; an unbounded one shows nothing.
func unbounded(sr *result.SweepSize) bool {
	return sr.LimitedByHost && failsIn(sr.TrialLog, 0).device > sr.TriedPPS*1.05
}

// isCliff says whether the byte rate falls from a to b (a smaller size) by
// more than drop. Sizes whose far end's limit this host hid (unbounded) are
// no evidence of a cliff.
func isCliff(a, b *result.SweepSize, drop float64) bool {
	if unbounded(a) || unbounded(b) || a.RatePPS <= 0 {
		return false
	}
	return byteRate(b) < (1-drop)*byteRate(a)
}

// findCliffs lists the falls between neighbouring sizes (ascending).
func findCliffs(sizes []*result.SweepSize, drop float64) []result.SweepCliff {
	var out []result.SweepCliff
	for i := 1; i < len(sizes); i++ {
		a, b := sizes[i-1], sizes[i]
		if isCliff(a, b, drop) {
			out = append(out, result.SweepCliff{Below: a.Size, Above: b.Size, RateBelowPPS: a.RatePPS, RateAbovePPS: b.RatePPS})
		}
	}
	return out
}

// bisect narrows a cliff to the byte: the middle size is searched, and the
// cliff moves to the half where the fall is.
func (s *sweeper) bisect(ctx context.Context, c result.SweepCliff) (result.SweepCliff, error) {
	below, above := s.done[c.Below], s.done[c.Above]
	for above.Size-below.Size > 1 {
		mid := (below.Size + above.Size) / 2
		sr, ok := s.done[mid]
		if !ok {
			s.planned += s.cfg.Repeat
			s.cut = &cut{below, above}
			s.bisectLeft = s.laterBisect.plus(s.halves(below.Size, mid, above.Size))
			var err error
			sr, err = s.size(ctx, mid, true)
			s.cut = nil
			if err != nil || sr == nil {
				return c, err
			}
		}
		var stop string
		if below, above, stop = narrow(below, sr, above, s.cfg.CliffDrop); stop != "" {
			s.res.Warnings = append(s.res.Warnings, stop)
			break
		}
	}
	return result.SweepCliff{Below: below.Size, Above: above.Size, RateBelowPPS: below.RatePPS, RateAbovePPS: above.RatePPS}, nil
}

// narrow is where the cliff between below and above lies once mid, a size
// between them, is searched: the half with the fall, or (stop says why)
// no further, the bisection ending there.
func narrow(below, mid, above *result.SweepSize, drop float64) (b, a *result.SweepSize, stop string) {
	switch {
	case isCliff(below, mid, drop):
		return below, mid, ""
	case isCliff(mid, above, drop):
		return mid, above, ""
	case unbounded(mid):
		return below, above, fmt.Sprintf("bisection of the cliff between %d and %d B stopped at %d B: this host could not send its rate, so it tells neither side", below.Size, above.Size, mid.Size)
	}
	// The fall spreads over both halves: the cliff is not one byte wide.
	return below, above, fmt.Sprintf("the fall between %d and %d B is not a single step (%d B lies between the two rates): bisection stopped", below.Size, above.Size, mid.Size)
}

// cut is the cliff a bisection is narrowing: the sizes either side of it.
type cut struct{ below, above *result.SweepSize }

// IP and UDP header bytes over a datagram's payload (IPv4).
const ipUDPHeaders = 28

// hint explains a cliff from the sizes and rates involved.
func hint(c result.SweepCliff) string {
	ratio := c.RateBelowPPS / c.RateAbovePPS
	var parts []string
	fall := 100 * (1 - c.RateAbovePPS*float64(c.Above)/(c.RateBelowPPS*float64(c.Below)))
	if !c.Exact {
		parts = append(parts, fmt.Sprintf("the byte rate falls %.0f %% somewhere between %d and %d B (not bisected to the byte)", fall, c.Below, c.Above))
	} else {
		parts = append(parts, fmt.Sprintf("the byte rate falls %.0f %% from %d to %d B", fall, c.Below, c.Above))
	}
	// A buffer holding k datagrams below the cliff and k−1 above it serves
	// the same buffers per second, so the packet rate falls by k/(k−1).
	if k := math.Round(ratio / (ratio - 1)); ratio > 1 && k >= 2 && k <= 64 && math.Abs(ratio-k/(k-1)) < 0.1*k/(k-1) {
		n := int(k)
		if c.Exact {
			parts = append(parts, fmt.Sprintf("the packet rate falls %.2f×, close to %d/%d: %d datagrams of %d B fill %d bytes and %d of %d B need %d, so a receive buffer of %d to %d bytes packed with datagrams is likely (%d to %d if it holds their IPv4/UDP headers too): a buffer-packing boundary",
				ratio, n, n-1, n, c.Below, n*c.Below, n, c.Above, n*c.Above, n*c.Below, n*c.Above-1, n*(c.Below+ipUDPHeaders), n*(c.Above+ipUDPHeaders)-1))
		} else {
			parts = append(parts, fmt.Sprintf("the packet rate falls %.2f×, close to %d/%d: a buffer that holds %d datagrams below the cliff and %d above it is likely, between %d and %d bytes",
				ratio, n, n-1, n, n-1, n*c.Below, n*c.Above))
		}
	}
	for _, mtu := range []int{1500, 1492, 1280, 9000, 576} {
		if c.Exact && c.Below+ipUDPHeaders == mtu {
			parts = append(parts, fmt.Sprintf("datagrams above %d B no longer fit an IPv4 packet of %d bytes (MTU %d): IP fragmentation doubles the packets", mtu-ipUDPHeaders, mtu, mtu))
		}
	}
	return strings.Join(parts, "; ")
}
