package rfc2544_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544"
	"github.com/wirebench/wirebench/internal/session/reflectrun"
	"github.com/wirebench/wirebench/internal/sweep"
)

// startReflector runs an in-process reflector with the model text on a
// free loopback port until the test ends; it returns the port and the
// parsed model.
func startReflector(t *testing.T, text string) (int, model.Spec) {
	t.Helper()
	if testing.Short() {
		t.Skip("an RFC 2544 run over loopback takes tens of seconds; skipped with -short")
	}
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
	return int(f.Addr().Port()), spec
}

// run runs cfg against the reflector on port over the medium, with short
// trials, every trial logged.
func run(t *testing.T, port int, medium string, cfg rfc2544.Config) *result.RFC2544 {
	t.Helper()
	m, err := linerate.LookupMedium(medium)
	if err != nil {
		t.Fatal(err)
	}
	cfg.LinePPS = func(size int) float64 {
		b, err := linerate.Analyze(m, linerate.Stack{Transport: linerate.UDP}, size)
		if err != nil {
			return 0
		}
		return b.PacketsPerSecond
	}
	cfg.Latency = result.RFC2544RoundTrip
	if cfg.Schedule.Search == 0 {
		cfg.Schedule = result.RFC2544Schedule{Search: 500 * time.Millisecond, Confirm: 2 * time.Second, Latency: time.Second, LatencyRepeats: 1,
			Loss: time.Second, BurstRepeats: 1, MaxBurst: 2000}
	}
	cfg.Gap = 100 * time.Millisecond
	cfg.OnProgress = func(p rfc2544.Progress) { t.Logf("%s %d B: %s", p.Test, p.Size, p.What) }
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res := rfc2544.NewResult(result.RFC2544Test{Mode: sweep.ModeReflect, Medium: medium})
	if err := rfc2544.Run(ctx, cfg, sweep.ReflectRunner{Host: "127.0.0.1", Port: port}, res); err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Interrupted {
		t.Fatal("the run timed out")
	}
	for _, w := range res.Warnings {
		t.Logf("warning: %s", w)
	}
	return res
}

// attempts runs check up to n times until it reports nothing wrong; the
// test fails with the last attempt's findings. A shared, loaded machine
// can starve our sender or the in-process reflector (the host, not the
// model): every miss is logged with the load.
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

// wireTime is the model's line time of one datagram of size payload
// bytes (docs/lab.md: UDP/IPv4 headers plus the medium's framing).
func wireTime(t *testing.T, spec model.Spec, size int) float64 {
	b, err := linerate.Analyze(spec.Overhead, linerate.Stack{Transport: linerate.UDP}, size)
	if err != nil {
		t.Fatal(err)
	}
	return b.WireBits / spec.Rate
}

// TestReflectRate: a 10 Mbit/s link (the model's default 200 ms queue)
// over a 100 Mbit/s medium: NDR within 1 % of the model's frame rate
// (10 Mbit/s over each datagram's wire size), PDR not below NDR, and every
// step of the loss curve within 0.5 points of what the model lets through:
// 1 − capacity/offered, less the queue the model still drains after the
// last datagram (capacity × 200 ms, counted over the trial).
//
// The 200 ms queue makes the truth hold on a loaded machine: our sender
// stalls for tens of milliseconds there, and a link behind a 5 ms queue
// then idles and loses what a steady sender would not
// (TestReflectBackToBack uses 5 ms, where bursts are short).
func TestReflectRate(t *testing.T) {
	port, spec := startReflector(t, "rate=10mbit")
	attempts(t, attemptsN(), func() []string {
		res := run(t, port, "eth100", rfc2544.Config{Sizes: testSizes(466, 1472), Tests: []string{result.RFC2544TestThroughput, result.RFC2544TestLoss}})
		var bad []string
		for _, sr := range res.Sizes {
			capPPS := 1 / wireTime(t, spec, sr.Size)
			t.Logf("%d B: NDR %.1f/s PDR %.1f/s (model %.1f/s)", sr.Size, sr.NDRPPS, sr.PDRPPS, capPPS)
			if math.Abs(sr.NDRPPS/capPPS-1) > 0.01 || sr.PDRPPS < sr.NDRPPS || sr.NDR.LimitedByHost {
				bad = append(bad, fmt.Sprintf("%d B: NDR %.1f, PDR %.1f (limited by host %v), want NDR within 1 %% of %.1f and PDR >= NDR", sr.Size, sr.NDRPPS, sr.PDRPPS, sr.NDR.LimitedByHost, capPPS))
			}
			if len(sr.LossCurve) < 2 {
				bad = append(bad, fmt.Sprintf("%d B: %d loss steps", sr.Size, len(sr.LossCurve)))
			}
			for _, p := range sr.LossCurve {
				drained := capPPS * queueTime(spec).Seconds() / (p.OfferedPPS * p.SendS)
				want := 100 * max(0, 1-capPPS/p.OfferedPPS-drained)
				t.Logf("%d B at %g %%: %.0f/s offered over %.3f s (sender lag %.1f ms): loss %.2f %%, model %.2f %%", sr.Size, p.OfferedPercent, p.OfferedPPS, p.SendS, p.SenderLagMS, p.LossPercent, want)
				if math.Abs(p.LossPercent-want) > 0.5 {
					bad = append(bad, fmt.Sprintf("%d B at %g %% (%.0f/s offered): loss %.2f %%, want %.2f ± 0.5", sr.Size, p.OfferedPercent, p.OfferedPPS, p.LossPercent, want))
				}
			}
		}
		return bad
	})
}

// TestReflectShallowQueue: a 10 Mbit/s link with 5 ms of queue, where this
// host's own stalls (our sender not running for several ms, then catching
// up in a burst) overflow the queue at rates the link carries. The NDR is
// within 1 % of the model's frame rate, or, when this host spoiled the
// trials at the rates near it, the size says so: its NDR is flagged as
// limited by this host, with the discounted trials listed, each with its
// reason. Never is an NDR above the model's rate, and never is one more
// than 1 % below it passed off as the link's.
func TestReflectShallowQueue(t *testing.T) {
	port, spec := startReflector(t, "rate=10mbit,queue=5ms")
	attempts(t, attemptsN(), func() []string {
		res := run(t, port, "eth100", rfc2544.Config{Sizes: testSizes(466, 1472), Tests: []string{result.RFC2544TestThroughput}})
		var bad []string
		for _, sr := range res.Sizes {
			capPPS := 1 / wireTime(t, spec, sr.Size)
			t.Logf("%d B: NDR %.1f/s PDR %.1f/s (model %.1f/s), limited by this host %v, %d trials discounted", sr.Size, sr.NDRPPS, sr.PDRPPS, capPPS, sr.NDR.LimitedByHost, sr.DiscountedTrials)
			for _, d := range sr.Discounted {
				t.Logf("  discounted %s at %.1f/s: lost %d, lag %.1f ms, room %.1f ms, then %s: %s", d.Search, d.RatePPS, d.Lost, d.SenderLagMS, d.QueueMS, d.Then, d.Reason)
			}
			for _, tr := range sr.NDR.TrialLog {
				t.Logf("  NDR trial at %.1f/s (confirm %v): %s, lost %d, lag %.1f ms", tr.RatePPS, tr.Confirm, tr.Verdict, tr.Lost, tr.MaxLagS*1e3)
			}
			if sr.DiscountedTrials != len(sr.Discounted) {
				bad = append(bad, fmt.Sprintf("%d B: discounted_trials %d, %d listed", sr.Size, sr.DiscountedTrials, len(sr.Discounted)))
			}
			for _, d := range sr.Discounted {
				if d.Reason == "" || d.Then == "" {
					bad = append(bad, fmt.Sprintf("%d B: discounted trial without its reason: %+v", sr.Size, d))
				}
			}
			switch {
			case sr.NDRPPS > capPPS*1.01:
				bad = append(bad, fmt.Sprintf("%d B: NDR %.1f above the model's %.1f", sr.Size, sr.NDRPPS, capPPS))
			case sr.NDRPPS >= capPPS*0.99:
			case !sr.NDR.LimitedByHost || sr.DiscountedTrials == 0:
				bad = append(bad, fmt.Sprintf("%d B: NDR %.1f, more than 1 %% below the model's %.1f, not flagged as this host's limit (limited by host %v, %d trials discounted)", sr.Size, sr.NDRPPS, capPPS, sr.NDR.LimitedByHost, sr.DiscountedTrials))
			}
		}
		return bad
	})
}

// TestReflectBackToBack: behind a 10 Mbit/s link with 5 ms of queue, the
// longest burst at a 100 Mbit/s medium's line rate carried whole is what
// the queue holds plus the frame in service (±1 frame): the model admits
// a datagram while its wait, its own line time included, is at most 5 ms.
// A burst this host could not send at line rate is its own failing (the
// link drains meanwhile), so an attempt where that happened is retried.
func TestReflectBackToBack(t *testing.T) {
	port, spec := startReflector(t, "rate=10mbit,queue=5ms")
	attempts(t, attemptsN(), func() []string {
		res := run(t, port, "eth100", rfc2544.Config{Sizes: testSizes(82, 466, 1472), Tests: []string{result.RFC2544TestBackToBack}})
		var bad []string
		for _, sr := range res.Sizes {
			// Frame k of a burst arriving every a seconds leaves the
			// link at (k+1)s and waits (k+1)s − ka, at most Q: the
			// queue fills by s − a per frame after the first.
			s, a, q := wireTime(t, spec, sr.Size), 1/sr.LinePPS, queueTime(spec).Seconds()
			want := math.Floor((q-s)/(s-a)) + 1
			t.Logf("%d B: back-to-back %v frames, %.1f us (model %v; at line rate %v)", sr.Size, sr.BackToBackFrames, sr.BackToBackUS, want, sr.BackToBack.AtLineRate)
			if math.Abs(sr.BackToBackFrames-want) > 1 {
				bad = append(bad, fmt.Sprintf("%d B: back-to-back %v frames (every burst at line rate: %v), want %v ± 1", sr.Size, sr.BackToBackFrames, sr.BackToBack.AtLineRate, want))
			}
		}
		return bad
	})
}

// TestReflectDelayLatency: through delay=5ms behind a 10 Mbit/s link, the
// round trip's median at 10 % of NDR is within 0.2 ms of what the model
// adds (the delay plus the datagram's line time) to the round trip through
// a plain reflector, and at 100 % its p90 lies
// between the 10 % minimum and that plus the queue's depth (the model
// drops what would wait longer). The link keeps the model's default 200 ms
// queue: behind a 5 ms one a loaded host's sender stalls decide the NDR
// (TestReflectRate says why), and this test is about the latency.
func TestReflectDelayLatency(t *testing.T) {
	port, spec := startReflector(t, "delay=5ms,rate=10mbit")
	plain, _ := startReflector(t, "")
	attempts(t, attemptsN(), func() []string {
		res := run(t, port, "eth100", rfc2544.Config{Sizes: testSizes(1472), Tests: []string{result.RFC2544TestLatency}})
		var bad []string
		for _, sr := range res.Sizes {
			if len(sr.Latency) != 4 {
				return append(bad, fmt.Sprintf("%d B: %d latency points (%s)", sr.Size, len(sr.Latency), sr.LatencyNote))
			}
			s := wireTime(t, spec, sr.Size) * 1000
			adds := spec.Delay.Seconds()*1000 + s
			lo, hi := sr.Latency[0], sr.Latency[3]
			for _, p := range sr.Latency {
				t.Logf("%d B at %g %% of NDR (%.0f/s): min %.3f p50 %.3f p90 %.3f p99 %.3f max %.3f ms (model adds %.3f)", sr.Size, p.LoadPercent, p.RatePPS, p.MinMS, p.P50MS, p.P90MS, p.P99MS, p.MaxMS, adds)
			}
			// What the model adds is over the round trip without it:
			// the same datagrams at the same rate through a plain
			// reflector, timed right after.
			base := baseRTT(t, plain, sr.Size, lo.RatePPS)
			t.Logf("%d B: plain reflector's p50 %.3f ms; with the model %.3f ms, %.3f more (model adds %.3f)", sr.Size, base, lo.P50MS, lo.P50MS-base, adds)
			if math.Abs(lo.P50MS-base-adds) > 0.2 {
				bad = append(bad, fmt.Sprintf("%d B: p50 at 10 %% %.3f ms, %.3f over a plain reflector's %.3f, want %.3f ± 0.2 over it", sr.Size, lo.P50MS, lo.P50MS-base, base, adds))
			}
			q := queueTime(spec).Seconds() * 1000
			// The bound is on p90: a reflector starved on a loaded
			// host releases a few datagrams late, which the model does
			// not bound.
			if hi.P90MS < lo.MinMS || hi.P90MS > lo.MinMS+q+1 {
				bad = append(bad, fmt.Sprintf("%d B: at 100 %% p90 %.3f ms, want from the 10 %% min %.3f to it + the queue's %.0f ms (+1 ms of host)", sr.Size, hi.P90MS, lo.MinMS, q))
			}
		}
		return bad
	})
}

// TestReflectModem: the modem model (5000 buffers/s of 2524 bytes) over a
// 1 Gbit/s medium: NDR shows the cliff, about 10,000/s at 1262 B and
// 5,000/s at 1263 B (−1 % to +0.3 %, sweep's bound), and the latency at
// 90 % of NDR is measured at both sizes with nothing lost.
func TestReflectModem(t *testing.T) {
	port, _ := startReflector(t, "service=5000,buffer=2524")
	attempts(t, attemptsN(), func() []string {
		res := run(t, port, "eth1g", rfc2544.Config{Sizes: []int{1262, 1263}, Tests: []string{result.RFC2544TestLatency}, Loads: []float64{90}})
		var bad []string
		for _, sr := range res.Sizes {
			want := 10000.0
			if sr.Size > 1262 {
				want = 5000
			}
			dev := 100 * (sr.NDRPPS/want - 1)
			t.Logf("%d B: NDR %.1f/s (%+.2f %% of %.0f)", sr.Size, sr.NDRPPS, dev, want)
			if dev < -1 || dev > 0.3 || sr.NDR.LimitedByHost {
				bad = append(bad, fmt.Sprintf("%d B: NDR %.1f/s (%+.2f %% of %.0f, limited by host %v)", sr.Size, sr.NDRPPS, dev, want, sr.NDR.LimitedByHost))
			}
			if len(sr.Latency) != 1 || sr.Latency[0].P50MS <= 0 || sr.Latency[0].Lost != 0 {
				bad = append(bad, fmt.Sprintf("%d B: latency at 90 %% %+v", sr.Size, sr.Latency))
				continue
			}
			p := sr.Latency[0]
			t.Logf("%d B at 90 %% of NDR (%.0f/s): p50 %.3f p99 %.3f max %.3f ms", sr.Size, p.RatePPS, p.P50MS, p.P99MS, p.MaxMS)
		}
		return bad
	})
}

// attemptsN is 3, or RFC2544_ATTEMPTS when set (1 to see one run).
func attemptsN() int {
	if os.Getenv("RFC2544_ATTEMPTS") == "1" {
		return 1
	}
	return 3
}

func testSizes(s ...int) []int {
	if v := os.Getenv("RFC2544_SIZE"); v != "" {
		var n int
		fmt.Sscan(v, &n)
		return []int{n}
	}
	return s
}

// queueTime is the longest wait the model's queue allows.
func queueTime(spec model.Spec) time.Duration {
	if spec.QueueTime == 0 {
		return model.DefaultQueueTime
	}
	return spec.QueueTime
}

// baseRTT is the median round trip in ms of 1 s of size-byte datagrams at
// rate through the reflector on port.
func baseRTT(t *testing.T, port, size int, rate float64) float64 {
	t.Helper()
	r, err := reflectrun.Run(context.Background(), reflectrun.Config{Host: "127.0.0.1", Port: port, Length: size, PPS: rate, Duration: time.Second})
	if err != nil || len(r.RTTs) == 0 {
		t.Fatalf("plain reflector: %v (%d back)", err, len(r.RTTs))
	}
	ms := make([]float64, len(r.RTTs))
	for i, d := range r.RTTs {
		ms[i] = float64(d) / 1e6
	}
	slices.Sort(ms)
	return ms[len(ms)/2]
}
