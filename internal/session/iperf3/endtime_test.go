package iperf3

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// TestIperf3ClientEndsWithItsData (issue 9 "Must show"): a 2 s test from
// our iperf3 client against a real `iperf3 -s` (3.12) reads 2.00-2.02 s on
// the server, in every direction, because our client sends TEST_END right
// after its last data as iperf3's own client does; and, one way, the
// server's receiver figure is within 1 % of our sender figure. Before the fix the
// server measured 2.20 s (a 200 ms pause before TEST_END).
func TestIperf3ClientEndsWithItsData(t *testing.T) {
	const d = 2 * time.Second
	udp := func(c session.ClientConfig) session.ClientConfig {
		c.UDP, c.Rate, c.Length = true, units.Rate{Value: 10e6}, 1400
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  session.ClientConfig
	}{
		{"tcp", session.ClientConfig{}},
		{"udp", udp(session.ClientConfig{})},
		{"tcp -R", session.ClientConfig{Reverse: true}},
		{"udp -R", udp(session.ClientConfig{Reverse: true})},
		{"tcp --bidir", session.ClientConfig{Bidir: true}},
		{"udp --bidir", udp(session.ClientConfig{Bidir: true})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.UDP {
				// The UDP cases (10 Mbit/s each, little CPU) run side by
				// side once the TCP cases, unpaced, ran one at a time.
				t.Parallel()
			}
			var errs []error
			for try := 1; try <= i3EndAttempts; try++ {
				cfg := tc.cfg
				cfg.Duration = d
				r, rep := runAgainstRealIperf3(t, &cfg)
				err := checkEndsWithData(t, &cfg, r, rep)
				if err == nil {
					return
				}
				errs = append(errs, err)
				t.Logf("attempt %d failed: %v", try, err)
			}
			t.Fatalf("all %d attempts failed: %v", i3EndAttempts, errs)
		})
	}
}

// i3EndAttempts is how many times one case of TestIperf3ClientEndsWithItsData
// may run. It asserts times to 20 ms on a shared two-core machine, where a
// process that is not scheduled for a while (seen: our writer 0.5 s late,
// iperf3 leaving datagrams unread; 3.12 serves both directions of --bidir
// from one thread) moves the figures for reasons that are not the
// protocol's; each try is logged and faces the same bounds, and a client
// that paused before TEST_END (the bug: 200 ms) fails every try. With two
// CPU-bound processes beside the tests, about one TCP try in four measured
// 2.03-2.74 s on the server, so three tries failed a -count=5 run about
// once in five; five tries, as the lab tests have, make that rare.
const i3EndAttempts = 5

// checkEndsWithData checks one run: the server's measured time and, one
// way, its receiver figure against our sender figure.
func checkEndsWithData(t *testing.T, cfg *session.ClientConfig, r *result.Result, rep *i3wire.Report) error {
	t.Helper()
	d := cfg.Duration.Seconds()
	// The server's own summaries: how long it measured, and what it
	// received of our data.
	var sums []*i3wire.ReportSummary
	for _, s := range []*i3wire.ReportSummary{rep.End.Sum, rep.End.SumSent, rep.End.SumReceived,
		rep.End.SumBidirReverse, rep.End.SumSentBidirReverse, rep.End.SumReceivedBidirReverse} {
		if s != nil {
			sums = append(sums, s)
		}
	}
	if len(sums) == 0 {
		return errors.New("iperf3 -s reported no end sums")
	}
	t.Logf("ours: sender %+v receiver %+v reverse %+v warnings %q", r.Sender, r.Receiver, r.Reverse, r.Warnings)
	for _, s := range sums {
		t.Logf("server: %.3f-%.3f s (%.3f s) %d bytes sender=%v", s.Start, s.End, s.Seconds, s.Bytes, s.Sender)
		if s.Seconds < d || s.Seconds > d+0.020 {
			return fmt.Errorf("the server measured %.4f s, want %.2f-%.2f", s.Seconds, d, d+0.02)
		}
	}
	if n := len(rep.Intervals); n > 0 && rep.Intervals[n-1].Sum != nil {
		if end := rep.Intervals[n-1].Sum.End; end > d+0.020 {
			return fmt.Errorf("the server's last interval ends at %.4f s", end)
		}
	}
	if cfg.Reverse || cfg.Bidir {
		// The 1 % bound is for one-way tests: a 3.12 server serves both
		// directions of --bidir from one thread and stops counting at
		// TEST_END with data still unread (or, for UDP on a busy host,
		// dropped); our result then says so.
		return nil
	}
	if r.Sender == nil || r.Receiver == nil || r.Receiver.Source != "peer-report" {
		return fmt.Errorf("sender %+v receiver %+v", r.Sender, r.Receiver)
	}
	ours, theirs := r.Sender.BitsPerSecond, r.Receiver.BitsPerSecond
	if math.Abs(theirs-ours) > 0.01*ours {
		return fmt.Errorf("the server's receiver figure %.4g bit/s is not within 1 %% of our sender figure %.4g", theirs, ours)
	}
	return nil
}
