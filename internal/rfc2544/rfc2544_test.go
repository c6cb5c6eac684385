package rfc2544

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/sweep"
)

// fakeDevice forwards capPPS datagrams a second with a queue of queue
// frames, and reflects with a round trip of rtt; trials take no time.
type fakeDevice struct {
	capPPS float64
	queue  int64
	rtt    time.Duration
	trials int
	stopAt int // cancel after this many trials (0: never)
	cancel context.CancelFunc
}

func (d *fakeDevice) Trial(_ context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	d.trials++
	if d.stopAt > 0 && d.trials >= d.stopAt {
		d.cancel()
	}
	if s.Packets > 0 { // a burst at line rate, far above capPPS
		lost := max(s.Packets-d.queue, 0)
		return result.SweepOutcome{Sent: s.Packets, OfferedPPS: s.RatePPS, Received: s.Packets - lost, Lost: lost, Total: s.Packets,
			SendSeconds: float64(s.Packets-1) / s.RatePPS}, nil
	}
	secs := s.Duration.Seconds()
	sent := int64(math.Round(s.RatePPS * secs))
	got := sent
	o := result.SweepOutcome{Sent: sent, OfferedPPS: s.RatePPS, Total: sent, SendSeconds: secs, BacklogKnown: true}
	if s.RatePPS > d.capPPS {
		got = min(sent, int64(d.capPPS*secs)+d.queue)
		o.ServicePPS = d.capPPS
		o.BacklogS = secs * (s.RatePPS/d.capPPS - 1)
	}
	o.Received, o.Lost = got, sent-got
	rec := stats.NewRTTRecorder()
	for range min(got, 200) {
		o.RTTs = append(o.RTTs, d.rtt)
		rec.Record(d.rtt)
	}
	if rec.Count() > 0 {
		sum := rec.Summary()
		o.RTTDist = &sum
	}
	return o, nil
}

func fakeConfig() Config {
	return Config{Sizes: []int{1472, 466}, Tests: Tests, LinePPS: func(size int) float64 { return 1e8 / 8 / float64(size+66) },
		Latency: result.RFC2544RoundTrip, Sleep: func(context.Context, time.Duration) error { return nil }}
}

// TestRunFake runs the four tests against a device of known capacity and
// queue: NDR within the search's 1 % of the capacity, PDR not below it,
// the latency points at the device's round trip, the loss curve equal to
// 1 − capacity/offered, and back-to-back equal to the queue.
func TestRunFake(t *testing.T) {
	d := &fakeDevice{capPPS: 812, queue: 4, rtt: 3 * time.Millisecond}
	res := NewResult(result.RFC2544Test{Mode: sweep.ModeReflect})
	if err := Run(context.Background(), fakeConfig(), d, res); err != nil {
		t.Fatal(err)
	}
	if len(res.Sizes) != 2 || res.Sizes[0].Size != 466 {
		t.Fatalf("sizes %+v", res.Sizes)
	}
	for _, sr := range res.Sizes {
		if !sr.NDRFound || !sr.PDRFound {
			t.Errorf("%d B: ndr_found %v, pdr_found %v with rates %.1f and %.1f", sr.Size, sr.NDRFound, sr.PDRFound, sr.NDRPPS, sr.PDRPPS)
		}
		if sr.NDRPPS < 812*0.99 || sr.NDRPPS > 812 || sr.PDRPPS < sr.NDRPPS || !sr.NDR.Confirmed {
			t.Errorf("%d B: NDR %.1f PDR %.1f (confirmed %v), want NDR in [803.9, 812] and PDR >= NDR", sr.Size, sr.NDRPPS, sr.PDRPPS, sr.NDR.Confirmed)
		}
		if len(sr.Latency) != 4 || sr.Latency[0].LoadPercent != 10 || sr.Latency[3].RatePPS != sr.NDRPPS {
			t.Fatalf("%d B: latency %+v", sr.Size, sr.Latency)
		}
		for _, p := range sr.Latency {
			if math.Abs(p.P50MS-3) > 0.01 || math.Abs(p.MaxMS-3) > 0.01 || len(p.Histogram) == 0 {
				t.Errorf("%d B at %g %%: p50 %.4f max %.4f (%d bins), want 3 ms", sr.Size, p.LoadPercent, p.P50MS, p.MaxMS, len(p.Histogram))
			}
		}
		if len(sr.LossCurve) != 10 {
			t.Errorf("%d B: %d loss steps, want all 10 (every step above 812/s loses)", sr.Size, len(sr.LossCurve))
		}
		for _, p := range sr.LossCurve {
			want := 100 * max(0, 1-812/p.OfferedPPS)
			if math.Abs(p.LossPercent-want) > 0.5 {
				t.Errorf("%d B at %g %%: loss %.2f %%, want %.2f", sr.Size, p.OfferedPercent, p.LossPercent, want)
			}
		}
		if sr.BackToBackFrames != 4 || !sr.BackToBack.AtLineRate || sr.BackToBackUS != 4/sr.LinePPS*1e6 {
			t.Errorf("%d B: back-to-back %v frames, %v us (at line rate %v), want 4", sr.Size, sr.BackToBackFrames, sr.BackToBackUS, sr.BackToBack.AtLineRate)
		}
		if len(sr.Done) != 4 {
			t.Errorf("%d B: done %v", sr.Size, sr.Done)
		}
	}
	var text, csv bytes.Buffer
	if err := report.WriteRFC2544(&text, res, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Throughput", "Latency at load", "Frame loss rate", "Back-to-back frames"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := report.WriteRFC2544CSV(&csv, res); err != nil || !strings.Contains(csv.String(), "backtoback,1472,,frames,4") {
		t.Errorf("csv (%v):\n%s", err, csv.String())
	}
	b, _ := json.Marshal(res)
	for _, key := range []string{`"kind":"rfc2544"`, `"schema":"wirebench/1"`, `"ndr_pps"`, `"loss_curve"`, `"back_to_back_us"`, `"p99_ms"`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

// TestOneSearchForBoth: the NDR and the PDR come from one search: every
// trial is in both logs (the PDR's marked reused), its trials grow from
// the search's length to the confirmation's, and each rate reported is
// what a final trial of the full length delivered.
func TestOneSearchForBoth(t *testing.T) {
	d := &fakeDevice{capPPS: 812, queue: 4}
	cfg := fakeConfig()
	cfg.Sizes, cfg.Tests = []int{1472}, []string{result.RFC2544TestThroughput}
	res := NewResult(result.RFC2544Test{})
	if err := Run(context.Background(), cfg, d, res); err != nil {
		t.Fatal(err)
	}
	sr := res.Sizes[0]
	if d.trials != sr.NDR.Trials || len(sr.NDR.TrialLog) != d.trials || len(sr.PDR.TrialLog) != d.trials || d.trials > 12 {
		t.Errorf("%d trials ran, NDR says %d, logs %d and %d", d.trials, sr.NDR.Trials, len(sr.NDR.TrialLog), len(sr.PDR.TrialLog))
	}
	log, full := sr.NDR.TrialLog, DefaultSchedule().Confirm.Seconds()
	if log[0].TrialS != 1 || log[0].Phase != 1 || log[0].RatePPS != cfg.LinePPS(1472) {
		t.Errorf("first trial %+v, want 1 s at line rate in phase 1", log[0])
	}
	for i, tr := range log {
		if i > 0 && tr.TrialS < log[i-1].TrialS {
			t.Errorf("trial %d shorter than the one before: %v < %v", i+1, tr.TrialS, log[i-1].TrialS)
		}
		if tr.Confirm != (tr.TrialS == full) || tr.Confirm != (tr.Phase == 3) {
			t.Errorf("trial %d: confirm %v, %v s, phase %d", i+1, tr.Confirm, tr.TrialS, tr.Phase)
		}
		if !sr.PDR.TrialLog[i].Reused || sr.PDR.TrialLog[i].RatePPS != tr.RatePPS {
			t.Errorf("PDR log entry %d: %+v", i+1, sr.PDR.TrialLog[i])
		}
	}
	for name, r := range map[string]*result.SweepSize{"NDR": sr.NDR, "PDR": sr.PDR} {
		if !r.Confirmed || r.HeldS != full || r.RatePPS > 812 || r.RatePPS < 812*0.99 {
			t.Errorf("%s: confirmed %v for %v s at %.1f/s, want %g s within 1 %% under 812", name, r.Confirmed, r.HeldS, r.RatePPS, full)
		}
	}
}

// TestInterruptKeepsFinished: stopped during the second size, the first
// is kept whole, the second with the tests it finished, and the run is
// marked interrupted.
func TestInterruptKeepsFinished(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &fakeDevice{capPPS: 812, queue: 4, rtt: time.Millisecond, cancel: cancel}
	cfg := fakeConfig()
	first := &fakeDevice{capPPS: 812, queue: 4, rtt: time.Millisecond}
	one := cfg
	one.Sizes = []int{466}
	if err := Run(context.Background(), one, first, NewResult(result.RFC2544Test{})); err != nil {
		t.Fatal(err)
	}
	d.stopAt = first.trials + first.trials/2 // in the middle of 1472 B's tests
	res := NewResult(result.RFC2544Test{})
	if err := Run(ctx, cfg, d, res); err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || len(res.Sizes) != 2 || len(res.Sizes[0].Done) != 4 || len(res.Sizes[1].Done) == 4 || len(res.Sizes[1].Done) == 0 {
		t.Fatalf("interrupted %v, sizes %d, done %v", res.Interrupted, len(res.Sizes), res.Sizes)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []func(*Config){
		func(c *Config) { c.Sizes = nil },
		func(c *Config) { c.Sizes = []int{8} },
		func(c *Config) { c.Tests = []string{"jitter"} },
		func(c *Config) { c.LinePPS = nil },
		func(c *Config) { c.PDRPercent = 100 },
		func(c *Config) { c.Loads = []float64{0} },
	} {
		cfg := fakeConfig()
		c(&cfg)
		cfg.defaults()
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v validated", cfg)
		}
	}
}

// TestStrictTrialsAreAMinute: with RFC 2544's schedule every throughput
// trial lasts 60 s (§26.1): the search's phases all use the full length,
// and the rates still hold within the resolution.
func TestStrictTrialsAreAMinute(t *testing.T) {
	d := &fakeDevice{capPPS: 812, queue: 4}
	cfg := fakeConfig()
	cfg.Sizes, cfg.Tests, cfg.Schedule = []int{1472}, []string{result.RFC2544TestThroughput}, StrictSchedule()
	res := NewResult(result.RFC2544Test{})
	if err := Run(context.Background(), cfg, d, res); err != nil {
		t.Fatal(err)
	}
	sr := res.Sizes[0]
	for i, tr := range sr.NDR.TrialLog {
		if tr.TrialS != 60 {
			t.Errorf("trial %d lasted %v s, want 60", i+1, tr.TrialS)
		}
	}
	if !sr.NDR.Confirmed || sr.NDR.HeldS != 60 || sr.NDRPPS > 812 || sr.NDRPPS < 812*0.99 {
		t.Errorf("NDR %.1f (confirmed %v, held %v s), want 60 s within 1 %% under 812", sr.NDRPPS, sr.NDR.Confirmed, sr.NDR.HeldS)
	}
}
