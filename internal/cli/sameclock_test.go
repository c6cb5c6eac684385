package cli

import (
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// TestSameClock: --mode wirebench picks the latency kind from whether the
// far end reads this machine's clock: found for loopback, told by
// --same-clock for another address, and --same-clock=false overrides what
// is found (labctl.SameClock decides; its own test covers the cases).
func TestSameClock(t *testing.T) {
	for _, c := range []struct {
		host      string
		same, set bool
		wantKind  string
		wantClock string
	}{
		{"127.0.0.1", false, false, result.RFC2544OneWay, result.RFC2544ClockShared},
		{"127.0.0.1", false, true, result.RFC2544DelayVariation, result.RFC2544ClockSeparate},
		{"192.0.2.1", false, false, result.RFC2544DelayVariation, result.RFC2544ClockSeparate},
		{"192.0.2.1", true, true, result.RFC2544OneWay, result.RFC2544ClockShared},
	} {
		f := &rfc2544Flags{port: 5001, mode: sweep.ModeWirebench, sizes: "1470", tests: "latency", medium: "eth100",
			pdr: "0.5%", loads: "50", maxBurst: 1000, sameClock: c.same, sameClockSet: c.set}
		cfg, test, _, err := parseRFC2544(c.host, f)
		if err != nil || cfg.Latency != c.wantKind || test.Clock != c.wantClock || test.ClockWhy == "" {
			t.Errorf("%s --same-clock=%v (given %v): kind %q clock %q (%s), %v; want %q %q", c.host, c.same, c.set, cfg.Latency, test.Clock, test.ClockWhy, err, c.wantKind, c.wantClock)
		}
	}
}
