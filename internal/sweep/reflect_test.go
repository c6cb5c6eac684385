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
func reflectSweep(t *testing.T, port int, maxPPS float64, sizes ...int) *sweep.Result {
	t.Helper()
	if testing.Short() {
		t.Skip("a sweep over loopback takes tens of seconds; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := sweep.Config{Sizes: sizes, MaxPPS: func(int) float64 { return maxPPS }, Trial: 500 * time.Millisecond, Gap: 100 * time.Millisecond,
		OnTrial: func(p sweep.Progress) {
			t.Logf("%d B trial %d at %.0f/s: %s (sent %d, back %d, send %.3f s, backlog %.3f s, sender lag %.3f s)", p.Size, p.Trial, p.RatePPS, p.Verdict,
				p.Outcome.Sent, p.Outcome.Received, p.Outcome.SendSeconds, p.Outcome.BacklogS, p.Outcome.MaxLagS)
		}}
	res := sweep.NewResult(sweep.Test{Mode: sweep.ModeReflect})
	if err := sweep.Run(ctx, cfg, sweep.ReflectRunner{Host: "127.0.0.1", Port: port}, res); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	for _, s := range res.Sizes {
		t.Logf("%d B: %.0f/s in %d trials (confirmed %v, limited by host %v)", s.Size, s.RatePPS, s.Trials, s.Confirmed, s.LimitedByHost)
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
	res := reflectSweep(t, port, 15000, 1200, 1250, 1300, 1400)
	if len(res.Cliffs) != 0 {
		t.Errorf("cliffs %+v against a plain reflector", res.Cliffs)
	}
	if len(res.Sizes) != 4 {
		t.Errorf("%d sizes searched, want the 4 asked (no bisection)", len(res.Sizes))
	}
	for _, s := range res.Sizes {
		if s.RatePPS <= 0 || s.RTT == nil {
			t.Errorf("%d B: rate %.0f, rtt %v", s.Size, s.RatePPS, s.RTT)
		}
	}
}
