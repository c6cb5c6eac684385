package cli

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// TestSameClock: loopback and this machine's own addresses share its
// clock; any other address does not unless --same-clock says so; and
// --mode wirebench picks the latency kind from that.
func TestSameClock(t *testing.T) {
	own := []net.Addr{&net.IPNet{IP: net.ParseIP("198.18.0.1"), Mask: net.CIDRMask(24, 32)}}
	for _, c := range []struct {
		ip   string
		want bool
	}{{"127.0.0.1", true}, {"127.3.2.1", true}, {"::1", true}, {"198.18.0.1", true}, {"::ffff:198.18.0.1", true}, {"198.18.0.2", false}, {"2001:db8::1", false}} {
		if got, _ := isLocalAddr(netip.MustParseAddr(c.ip).Unmap(), own); got != c.want {
			t.Errorf("%s local: %v, want %v", c.ip, got, c.want)
		}
	}
	ctx := context.Background()
	if ok, why := sameClock(ctx, "127.0.0.1", false); !ok {
		t.Errorf("127.0.0.1 not the same clock: %s", why)
	}
	// 192.0.2.1 (documentation range) is nobody's interface address here.
	if ok, why := sameClock(ctx, "192.0.2.1", false); ok {
		t.Errorf("192.0.2.1 taken for the same clock: %s", why)
	}
	if ok, _ := sameClock(ctx, "192.0.2.1", true); !ok {
		t.Error("--same-clock not heeded")
	}
	// Found, it says so; --same-clock=false overrides what is found.
	if ok, why := sameClockChoice(ctx, "127.0.0.1", false, false); !ok || !strings.HasPrefix(why, "found: ") {
		t.Errorf("127.0.0.1 with the flag not given: %v (%s), want found", ok, why)
	}
	if ok, why := sameClockChoice(ctx, "127.0.0.1", true, false); ok || !strings.Contains(why, "--same-clock=false") {
		t.Errorf("127.0.0.1 with --same-clock=false: %v (%s), want not shared", ok, why)
	}
	for _, c := range []struct {
		host      string
		same      bool
		wantKind  string
		wantClock string
	}{
		{"127.0.0.1", false, result.RFC2544OneWay, result.RFC2544ClockShared},
		{"192.0.2.1", false, result.RFC2544DelayVariation, result.RFC2544ClockSeparate},
		{"192.0.2.1", true, result.RFC2544OneWay, result.RFC2544ClockShared},
	} {
		f := &rfc2544Flags{port: 5001, mode: sweep.ModeWirebench, sizes: "1470", tests: "latency", medium: "eth100",
			pdr: "0.5%", loads: "50", maxBurst: 1000, sameClock: c.same}
		cfg, test, _, err := parseRFC2544(c.host, f)
		if err != nil || cfg.Latency != c.wantKind || test.Clock != c.wantClock || test.ClockWhy == "" {
			t.Errorf("%s --same-clock=%v: kind %q clock %q (%s), %v; want %q %q", c.host, c.same, cfg.Latency, test.Clock, test.ClockWhy, err, c.wantKind, c.wantClock)
		}
	}
}
