package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/compare"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// udpRun is a UDP test result received at bps with lost of 1000
// datagrams lost and the given jitter.
func udpRun(peer string, bps float64, lost int64, jitter float64) *result.Result {
	r := udpResult(peer, int64(bps/8), lost)
	r.Receiver.BitsPerSecond, r.Receiver.JitterMS = bps, jitter
	return r
}

// testSweep runs a real sweep (internal/sweep's search, cliff bisection
// and summaries) against a simulated device behind eth100: seed 002's
// modem, which forwards 5000 buffers of 2524 bytes a second, capped by the
// line. No sockets, no waiting: the device answers each trial at once.
func testSweep(t testing.TB) *result.Sweep {
	t.Helper()
	m, err := linerate.LookupMedium("eth100")
	if err != nil {
		t.Fatal(err)
	}
	line := func(size int) float64 {
		b, err := linerate.Analyze(m, linerate.Stack{Transport: linerate.UDP}, size)
		if err != nil {
			t.Fatalf("line rate of %d B: %v", size, err)
		}
		return b.PacketsPerSecond
	}
	device := sweep.RunnerFunc(func(_ context.Context, s sweep.Spec) (result.SweepOutcome, error) {
		secs := s.Duration.Seconds()
		sent := int64(math.Round(s.RatePPS * secs))
		capPPS := math.Min(line(s.Size), 5000*math.Floor(2524/float64(s.Size)))
		got := sent
		if s.RatePPS > capPPS {
			got = int64(math.Floor(capPPS * secs))
		}
		return result.SweepOutcome{Sent: sent, OfferedPPS: s.RatePPS, Received: got, Lost: sent - got, Total: sent,
			SendSeconds: secs, ReceiveSeconds: secs, BacklogKnown: true}, nil
	})
	sizes := []int{64, 512, 1200, 1300, 1470}
	res := sweep.NewResult(result.SweepTest{Mode: "reflect", Host: "192.0.2.7", Port: 5001, Medium: m.Name, Sizes: sizes, Bisect: true, Repeat: 1, TrialS: 1})
	cfg := sweep.Config{Sizes: sizes, MaxPPS: line, LinePPS: line, Trial: time.Second,
		Sleep: func(context.Context, time.Duration) error { return nil }}
	if err := sweep.Run(context.Background(), cfg, device, res); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if len(res.Cliffs) != 1 || len(res.Sizes) <= len(sizes) {
		t.Fatalf("the simulated modem should give one bisected cliff: %d cliffs, %d sizes", len(res.Cliffs), len(res.Sizes))
	}
	return res
}

// addSweep keeps res in the server's memory history.
func addSweep(t testing.TB, s *Server, res *result.Sweep) int64 {
	t.Helper()
	id, err := s.memory.AddDoc(RunSummary{Kind: res.Kind, StartedAt: res.StartedAt, Target: fmt.Sprintf("%s:%d", res.Test.Host, res.Test.Port),
		Summary: fmt.Sprintf("sweep %s, %d sizes, %d cliffs", res.Test.Mode, len(res.Sizes), len(res.Cliffs)), Labels: map[string]string{"dut": "modem"}}, res)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A stored sweep comes back from /api/runs/ID as the document the sweep
// wrote, with its figures (one rate per size the host did not limit).
func TestAPISweepRun(t *testing.T) {
	s := New(Config{})
	res := testSweep(t)
	id := addSweep(t, s, res)
	srv := httptestServer(t, s)
	var run struct {
		RunSummary
		Result  result.Sweep     `json:"result"`
		Figures []compare.Metric `json:"figures"`
	}
	getJSON(t, fmt.Sprintf("%s/api/runs/%d", srv, id), &run)
	if run.Kind != result.KindSweep || run.ID != id {
		t.Fatalf("run %d kind %q, want %d sweep", run.ID, run.Kind, id)
	}
	want, _ := json.Marshal(res)
	var wantBack result.Sweep
	_ = json.Unmarshal(want, &wantBack)
	if !reflect.DeepEqual(run.Result, wantBack) {
		t.Errorf("the sweep came back changed:\ngot  %+v\nwant %+v", run.Result, wantBack)
	}
	if len(run.Figures) != len(res.Sizes) {
		t.Fatalf("%d figures, want one per size (%d)", len(run.Figures), len(res.Sizes))
	}
	for i, sr := range res.Sizes {
		f := run.Figures[i]
		if f.Name != fmt.Sprintf("rate_pps@%d", sr.Size) || f.Value != sr.RatePPS {
			t.Errorf("figure %d = %s %v, want rate_pps@%d %v", i, f.Name, f.Value, sr.Size, sr.RatePPS)
		}
	}
	c := res.Cliffs[0]
	if c.Below != 1262 || c.Above != 1263 {
		t.Errorf("cliff %d/%d, want 1262/1263", c.Below, c.Above)
	}
	t.Logf("sweep: %d sizes, cliff %d/%d at %.0f → %.0f /s", len(res.Sizes), c.Below, c.Above, c.RateBelowPPS, c.RateAbovePPS)
}

func TestAPICompare(t *testing.T) {
	s := New(Config{})
	a, _ := s.memory.Add(udpRun("192.0.2.1:5001", 10e6, 0, 0.20), map[string]string{"fw": "1.3"})
	b, _ := s.memory.Add(udpRun("192.0.2.1:5001", 8e6, 10, 0.20), map[string]string{"fw": "1.4"})
	sw := addSweep(t, s, testSweep(t))
	again, _ := s.memory.Add(udpRun("192.0.2.1:5001", 10e6, 0, 0.20), map[string]string{"fw": "1.3"})
	srv := httptestServer(t, s)

	var c Comparison
	getJSON(t, fmt.Sprintf("%s/api/compare?a=%d&b=%d", srv, a, b), &c)
	if c.A.ID != a || c.B.ID != b || c.Tolerance != DefaultTolerance {
		t.Fatalf("compared %d with %d at tolerance %v", c.A.ID, c.B.ID, c.Tolerance)
	}
	// Named as `wirebench compare` names them: by the labels that differ
	// (both runs also carry protocol, peer and so on), else by id.
	if c.AName != "fw=1.3" || c.BName != "fw=1.4" {
		t.Errorf("runs named %q and %q, want fw=1.3 and fw=1.4", c.AName, c.BName)
	}
	var same Comparison
	getJSON(t, fmt.Sprintf("%s/api/compare?a=%d&b=%d", srv, a, again), &same)
	if same.AName != fmt.Sprintf("run %d", a) || same.BName != fmt.Sprintf("run %d", again) {
		t.Errorf("runs with the same labels named %q and %q, want run %d and run %d", same.AName, same.BName, a, again)
	}
	want := map[string][3]any{ // A, B, verdict
		"throughput":   {10e6, 8e6, compare.Worse},
		"loss_percent": {0.0, 1.0, compare.Worse},
		"jitter_ms":    {0.20, 0.20, compare.Same},
	}
	if len(c.Metrics) != len(want) {
		t.Fatalf("%d metrics, want %d: %+v", len(c.Metrics), len(want), c.Metrics)
	}
	for _, m := range c.Metrics {
		w, ok := want[m.Name]
		if !ok || m.A != w[0] || m.B != w[1] || m.Verdict != w[2] {
			t.Errorf("%s: A %v B %v verdict %s, want %v", m.Name, m.A, m.B, m.Verdict, w)
		}
	}
	if d := c.Metrics[0]; d.Ratio == nil || math.Abs(*d.Ratio-0.8) > 1e-12 || d.Difference != -2e6 {
		t.Errorf("throughput ratio %v difference %v, want 0.8 and -2e6", d.Ratio, d.Difference)
	}
	if c.Verdict != "regression" || strings.Join(c.Regressions, ",") != "throughput,loss_percent" {
		t.Errorf("verdict %s, regressions %v", c.Verdict, c.Regressions)
	}
	// The other way round it is an improvement; with 25 % tolerance the
	// throughput (B/A 1.25) is the same, the loss (from 1 % to 0) not.
	c = Comparison{}
	getJSON(t, fmt.Sprintf("%s/api/compare?a=%d&b=%d&tolerance=25%%25", srv, b, a), &c)
	if c.Tolerance != 0.25 {
		t.Errorf("tolerance=25%%25 read as %v", c.Tolerance)
	}
	if c.Verdict != "improvement" || c.Metrics[0].Verdict != compare.Same || c.Metrics[1].Verdict != compare.Better {
		t.Errorf("B against A at 25 %%: verdict %s, metrics %+v", c.Verdict, c.Metrics)
	}
	// A test and a sweep share no figure.
	c = Comparison{}
	getJSON(t, fmt.Sprintf("%s/api/compare?a=%d&b=%d", srv, a, sw), &c)
	if len(c.Metrics) != 0 || len(c.OnlyInA) != 3 || len(c.OnlyInB) == 0 || len(c.Warnings) == 0 {
		t.Errorf("test against sweep: %d metrics, only in A %v, only in B %v, warnings %v", len(c.Metrics), c.OnlyInA, c.OnlyInB, c.Warnings)
	}

	for _, tc := range []struct {
		query string
		code  int
		says  string
	}{
		{fmt.Sprintf("a=%d", a), http.StatusBadRequest, "missing b"},
		{fmt.Sprintf("a=x&b=%d", b), http.StatusBadRequest, `invalid run id a="x"`},
		{fmt.Sprintf("a=%d&b=-2", a), http.StatusBadRequest, "invalid run id b"},
		{fmt.Sprintf("a=%d&b=%d&tolerance=lots", a, b), http.StatusBadRequest, "invalid tolerance"},
		{fmt.Sprintf("a=%d&b=999", a), http.StatusNotFound, "run 999: no such run"},
		{fmt.Sprintf("a=999&b=%d", b), http.StatusNotFound, "run 999: no such run"},
	} {
		code, body := get(t, srv+"/api/compare?"+tc.query)
		if code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("/api/compare?%s: %d %q, want %d saying %q", tc.query, code, body, tc.code, tc.says)
		}
	}
}
