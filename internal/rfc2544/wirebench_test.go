package rfc2544_test

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/sweep"
)

// startWirebenchServer runs an in-process wirebench server on a free
// loopback port until the test ends and returns the port.
func startWirebenchServer(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := iperf2.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Port()
}

// TestWirebenchOneWayLatency: against a wirebench server on loopback (one
// clock), the latency test gets one-way points from the server's transit
// summaries: every load measured, marked one_way, covering datagrams,
// with ordered, non-negative figures and no mean (the summary has none).
// At 18 B of UDP payload (RFC 2544's 64 B frame on Ethernet) too: the
// runner Options build pads the FIN, by whose length the server sizes its
// reply, to room for the summary.
// The 10 Mbit/s medium keeps the rates low enough for any loopback; how
// long a transit took is not checked.
func TestWirebenchOneWayLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("an RFC 2544 run over loopback takes seconds; skipped with -short")
	}
	port := startWirebenchServer(t)
	m, err := linerate.LookupMedium("eth10")
	if err != nil {
		t.Fatal(err)
	}
	cfg := rfc2544.Config{Sizes: []int{18, 1472}, Tests: []string{result.RFC2544TestLatency}, Loads: []float64{50, 100},
		Latency: result.RFC2544OneWay, Gap: 50 * time.Millisecond,
		Schedule: result.RFC2544Schedule{Search: 200 * time.Millisecond, Confirm: 500 * time.Millisecond, Latency: 300 * time.Millisecond,
			LatencyRepeats: 2, Loss: 200 * time.Millisecond, BurstRepeats: 1, MaxBurst: 100},
		LinePPS: func(size int) float64 {
			b, err := linerate.Analyze(m, linerate.Stack{Transport: linerate.UDP}, size)
			if err != nil {
				return 0
			}
			return b.PacketsPerSecond
		},
		OnProgress: func(p rfc2544.Progress) { t.Logf("%s %d B: %s", p.Test, p.Size, p.What) },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := rfc2544.NewResult(result.RFC2544Test{Mode: sweep.ModeWirebench, Medium: "eth10"})
	o := rfc2544.Options{Port: port, Mode: sweep.ModeWirebench, Sizes: "18,1472", Tests: result.RFC2544TestLatency, Medium: "eth10", PDR: "0.5%", Loads: "50,100", MaxBurst: 100}
	setup, err := o.Setup("127.0.0.1", func(string, bool) (bool, string) { return true, "loopback" })
	if err != nil {
		t.Fatal(err)
	}
	runner := setup.Runner
	if err := rfc2544.Run(ctx, cfg, runner, res); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, w := range res.Warnings {
		t.Logf("warning: %s", w)
	}
	if len(res.Sizes) != 2 {
		t.Fatalf("%d sizes", len(res.Sizes))
	}
	for _, sr := range res.Sizes {
		checkOneWay(t, sr, cfg.Loads)
	}
}

// checkOneWay checks one size's one-way latency points.
func checkOneWay(t *testing.T, sr result.RFC2544Size, loads []float64) {
	t.Helper()
	if len(sr.Latency) != len(loads) {
		t.Fatalf("%d B: %d latency points for %d loads (NDR %.0f/s): %s", sr.Size, len(sr.Latency), len(loads), sr.NDRPPS, sr.LatencyNote)
	}
	for _, p := range sr.Latency {
		t.Logf("%d B at %g %%: %d timed, min %.3f p50 %.3f p99 %.3f max %.3f ms", sr.Size, p.LoadPercent, p.Timed, p.MinMS, p.P50MS, p.P99MS, p.MaxMS)
		if p.Kind != result.RFC2544OneWay || p.Timed < 2 || p.Repeats != 2 {
			t.Errorf("%d B at %g %%: kind %q, %d timed over %d repeats: want one_way, datagrams timed, 2 repeats", sr.Size, p.LoadPercent, p.Kind, p.Timed, p.Repeats)
		}
		if p.MinMS < 0 || !(p.MinMS <= p.P50MS && p.P50MS <= p.P90MS && p.P90MS <= p.P99MS && p.P99MS <= p.P999MS && p.P999MS <= p.MaxMS) {
			t.Errorf("%d B at %g %%: figures negative or out of order: %+v", sr.Size, p.LoadPercent, p)
		}
		if p.MeanMS != 0 || len(p.Histogram) != 0 {
			t.Errorf("%d B at %g %%: a mean %v or histogram %d from a summary that has neither", sr.Size, p.LoadPercent, p.MeanMS, len(p.Histogram))
		}
	}
	if sr.LatencyNote == "" {
		t.Errorf("%d B: no note on what the latency figures measure", sr.Size)
	}
}
