package sweep_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session/reflectrun"
	"github.com/wirebench/wirebench/internal/sweep"
)

// startReflector runs an in-process reflector with the model text on a
// free loopback port until the test ends, and returns its port.
func startReflector(t *testing.T, text string) int {
	t.Helper()
	spec, err := model.Parse(text)
	if err != nil {
		t.Fatalf("model %q: %v", text, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f, err := lab.NewReflector(ctx, "127.0.0.1:0", spec, text)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep, err := f.Run(ctx)
		if err != nil {
			t.Errorf("reflector: %v", err)
		}
		t.Logf("reflector %q: in %d, forwarded %d, dropped %d", text, rep.Datagrams.In, rep.Datagrams.Forwarded, rep.Datagrams.Dropped)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return int(f.Addr().Port())
}

// reflectSweep sweeps sizes against a reflector on port, starting at
// maxPPS, with short trials.
func reflectSweep(t *testing.T, port int, maxPPS float64, sizes ...int) *result.Sweep {
	t.Helper()
	return reflectSweepWith(t, port, sweep.Config{Sizes: sizes, MaxPPS: func(int) float64 { return maxPPS }, Trial: 500 * time.Millisecond})
}

// reflectSweepWith runs cfg against a reflector on port, every trial and
// size logged.
func reflectSweepWith(t *testing.T, port int, cfg sweep.Config) *result.Sweep {
	t.Helper()
	if testing.Short() {
		t.Skip("a sweep over loopback takes tens of seconds; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg.Gap = 100 * time.Millisecond
	cfg.OnTrial = func(p sweep.Progress) {
		o := p.Outcome
		t.Logf("%d B trial %d at %.0f/s: %s (sent %d, back %d, send %.3f s, served at %.0f/s while queued, backlog %.4f s, sender lag %.3f s)", p.Size, p.Trial, p.RatePPS, p.Verdict,
			o.Sent, o.Received, o.SendSeconds, o.ServicePPS, o.BacklogS, o.MaxLagS)
	}
	res := sweep.NewResult(result.SweepTest{Mode: sweep.ModeReflect})
	if err := sweep.Run(ctx, cfg, sweep.ReflectRunner{Host: "127.0.0.1", Port: port}, res); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	for _, s := range res.Sizes {
		t.Logf("%d B: %.0f/s delivered at %.0f/s offered, held for %v s, in %d trials (confirmed %v, limited by host %v)", s.Size, s.RatePPS, s.TriedPPS,
			s.HeldS, s.Trials, s.Confirmed, s.LimitedByHost)
	}
	return res
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*want }

// TestReflectModemCliff is issue 11's first must-show: seed 002's modem
// (5000 buffers/s of 2524 bytes) as a reflector; the sweep finds the cliff
// between 1262 and 1263 B, at about 10000/s below and 5000/s above.
//
// The rates come from timing on a shared two-core machine, so a sweep
// whose sender was starved may miss; it runs up to three times, every
// attempt's figures logged, and every attempt faces the same assertions:
// a sweep that is wrong fails all three.
func TestReflectModemCliff(t *testing.T) {
	port := startReflector(t, "service=5000,buffer=2524")
	attempts(t, 3, func() []string {
		res := reflectSweep(t, port, 15000, 1200, 1250, 1300, 1400)
		var bad []string
		if len(res.Cliffs) != 1 {
			return append(bad, fmt.Sprintf("cliffs %+v, want exactly one", res.Cliffs))
		}
		c := res.Cliffs[0]
		t.Logf("cliff %d/%d: %.0f → %.0f /s; %s", c.Below, c.Above, c.RateBelowPPS, c.RateAbovePPS, c.Hint)
		if c.Below != 1262 || c.Above != 1263 {
			bad = append(bad, fmt.Sprintf("cliff between %d and %d, want 1262 and 1263", c.Below, c.Above))
		}
		if !near(c.RateBelowPPS, 10000, 0.05) || !near(c.RateAbovePPS, 5000, 0.05) {
			bad = append(bad, fmt.Sprintf("rates %.0f and %.0f, want 10000 and 5000 within 5 %%", c.RateBelowPPS, c.RateAbovePPS))
		}
		for _, s := range res.Sizes {
			want := 5000.0
			if s.Size <= 1262 {
				want = 10000
			}
			if !near(s.RatePPS, want, 0.05) || s.LimitedByHost {
				bad = append(bad, fmt.Sprintf("%d B: %.0f/s (limited by host %v), want %.0f within 5 %%", s.Size, s.RatePPS, s.LimitedByHost, want))
			}
		}
		return bad
	})
}

// attempts runs check up to n times until it reports nothing wrong; the
// test fails with the last attempt's findings. Every attempt is logged.
func attempts(t *testing.T, n int, check func() []string) {
	t.Helper()
	var bad []string
	for i := 1; i <= n; i++ {
		if bad = check(); len(bad) == 0 {
			return
		}
		b, _ := os.ReadFile("/proc/loadavg")
		t.Logf("attempt %d of %d missed (load %s): %s", i, n, strings.TrimSpace(string(b)), strings.Join(bad, "; "))
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestReflectPlainNoCliff: the same sweep against a reflector without a
// model finds no cliff.
func TestReflectPlainNoCliff(t *testing.T) {
	port := startReflector(t, "")
	// The reflector runs in this process on the same two cores: when the
	// machine starves it, it holds a queue as a slow device would, and a
	// size can read as a cliff. Every attempt is logged and held to the
	// same assertions; a reflector on its own host does not stall.
	attempts(t, 3, func() []string {
		var bad []string
		res := reflectSweep(t, port, 15000, 1200, 1250, 1300, 1400)
		if len(res.Cliffs) != 0 {
			bad = append(bad, fmt.Sprintf("cliffs %+v against a plain reflector", res.Cliffs))
		}
		if len(res.Sizes) != 4 {
			bad = append(bad, fmt.Sprintf("%d sizes searched, want the 4 asked (no bisection)", len(res.Sizes)))
		}
		for _, s := range res.Sizes {
			if s.RatePPS <= 0 || s.RTT == nil {
				bad = append(bad, fmt.Sprintf("%d B: rate %.0f, rtt %v", s.Size, s.RatePPS, s.RTT))
			}
		}
		return bad
	})
}

// modemRate is what the size sweep's modem model (service=5000,buffer=2524)
// serves: two datagrams per 2524-byte buffer up to 1262 B, one above.
func modemRate(size int) float64 {
	if size <= 1262 {
		return 10000
	}
	return 5000
}

// checkModemRates holds a sweep of the modem to issue 19's bound: every
// size confirmed, not limited by this host, and within −1 % to +0.3 % of
// what the model serves.
func checkModemRates(res *result.Sweep, held float64) []string {
	var bad []string
	if len(res.Sizes) == 0 {
		return []string{"no size finished"}
	}
	for _, s := range res.Sizes {
		want := modemRate(s.Size)
		dev := 100 * (s.RatePPS/want - 1)
		if dev < -1 || dev > 0.3 || !s.Confirmed || s.LimitedByHost || s.HeldS != held {
			bad = append(bad, fmt.Sprintf("%d B: %.1f/s (%+.2f %% of %.0f; confirmed %v, limited by host %v, held for %v s), want −1 %% to +0.3 %%, confirmed over %v s",
				s.Size, s.RatePPS, dev, want, s.Confirmed, s.LimitedByHost, s.HeldS, held))
		}
	}
	return bad
}

// lossOver10s sends 10 s at rate to the reflector and says what was lost;
// a loss our own sender's stall explains (it fell behind by more than the
// model's 200 ms queue) is reported as such.
func lossOver10s(t *testing.T, port, size int, rate float64) []string {
	t.Helper()
	r, err := reflectrun.Run(context.Background(), reflectrun.Config{Host: "127.0.0.1", Port: port, Length: size, PPS: rate, Duration: 10 * time.Second})
	if err != nil {
		return []string{fmt.Sprintf("%d B at %.0f/s for 10 s: %v", size, rate, err)}
	}
	t.Logf("%d B at %.1f/s for 10 s: sent %d, back %d, lost %d, offered %.1f/s, sender lag %v, host drops %d", size, rate, r.Sent, r.Received, r.Lost(),
		r.OfferedPPS, r.MaxLag, r.HostDrops)
	if r.Lost() > 0 || r.Sent < int64(9*rate) {
		return []string{fmt.Sprintf("%d B at %.1f/s for 10 s: %d of %d lost (sender lag %v, host drops %d)", size, rate, r.Lost(), r.Sent, r.MaxLag, r.HostDrops)}
	}
	return nil
}

// TestReflectModemDeliveredRate is issue 19's must-show for the sweep: the
// modem model serves exactly 10,000/s up to 1262 B and 5,000/s above; with
// 0.5 s, 1 s and 2 s trials (each rate confirmed by a 2 s trial) the sweep
// reports 1262 B and 1263 B within −1 % to +0.3 % of that, and 10 s at each
// rate reported loses nothing. Before, 0.5 s trials reported 10,352 and
// 5,197/s (+3.5 %, +3.9 %), and 10 s at 5,197/s lost 1.9 %.
//
// The model serves by the clock; a host too loaded to keep our sender on
// its schedule makes a sweep miss (limited by this host, or low), so each
// trial length gets up to three attempts, every one logged with the load.
func TestReflectModemDeliveredRate(t *testing.T) {
	port := startReflector(t, "service=5000,buffer=2524")
	for _, trial := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
		t.Run(trial.String(), func(t *testing.T) {
			attempts(t, 3, func() []string {
				res := reflectSweepWith(t, port, sweep.Config{Sizes: []int{1262, 1263}, MaxPPS: func(int) float64 { return 15000 },
					Trial: trial, Confirm: 2 * time.Second, NoBisect: true})
				if bad := checkModemRates(res, 2); len(bad) > 0 {
					return bad
				}
				var bad []string
				for _, s := range res.Sizes {
					bad = append(bad, lossOver10s(t, port, s.Size, s.RatePPS)...)
				}
				return bad
			})
		})
	}
}

// TestReflectModemConfirm10s: with the default confirmation of 10 s (the
// CLI's), 0.5 s trials: the rates hold for 10 s, lose nothing in it, and
// stay within −1 % to +0.3 % of the model's.
func TestReflectModemConfirm10s(t *testing.T) {
	port := startReflector(t, "service=5000,buffer=2524")
	attempts(t, 3, func() []string {
		res := reflectSweepWith(t, port, sweep.Config{Sizes: []int{1262, 1263}, MaxPPS: func(int) float64 { return 15000 },
			Trial: 500 * time.Millisecond, Confirm: 10 * time.Second, NoBisect: true})
		bad := checkModemRates(res, 10)
		for _, s := range res.Sizes {
			if s.LossPercent == nil || *s.LossPercent != 0 {
				bad = append(bad, fmt.Sprintf("%d B: the 10 s confirmation lost %s %%", s.Size, fmtLoss(s.LossPercent)))
			}
		}
		return bad
	})
}

// fmtLoss prints a confirming trial's loss, "-" when there was none.
func fmtLoss(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}
