package rfc2544

import (
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// TestHostSpoiled: a size that ran no throughput test (no NDR search) or no
// back-to-back test is read without its absent parts, and each way this
// host spoils a size is seen.
func TestHostSpoiled(t *testing.T) {
	for _, c := range []struct {
		sizes []result.RFC2544Size
		want  bool
	}{
		{[]result.RFC2544Size{{Size: 64}}, false},
		{[]result.RFC2544Size{{Size: 64, DiscountedTrials: 1}}, true},
		{[]result.RFC2544Size{{Size: 64}, {Size: 128, NDR: &result.SweepSize{LimitedByHost: true}}}, true},
		{[]result.RFC2544Size{{Size: 64, BackToBack: &result.RFC2544BackToBack{HostSpoiled: true}}}, true},
		{[]result.RFC2544Size{{Size: 64, NDR: &result.SweepSize{}, BackToBack: &result.RFC2544BackToBack{}}}, false},
	} {
		if got := hostSpoiled(c.sizes); got != c.want {
			t.Errorf("%+v: %v, want %v", c.sizes, got, c.want)
		}
	}
}
