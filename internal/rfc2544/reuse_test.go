package rfc2544

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// specLog records the trials a run asked for.
type specLog struct {
	r     sweep.Runner
	specs []sweep.Spec
}

func (l *specLog) Trial(ctx context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	l.specs = append(l.specs, s)
	return l.r.Trial(ctx, s)
}

// TestDefaultReusesSearchTrials: with the default schedule the latency
// point at 100 % of the NDR is the NDR's confirming trial, and the
// frame loss step at the medium's maximum rate is the search's first 1 s
// trial at that rate; neither is run again, and the document says so.
func TestDefaultReusesSearchTrials(t *testing.T) {
	d := &fakeDevice{capPPS: 812, queue: 4, rtt: 3 * time.Millisecond}
	l := &specLog{r: d}
	cfg := fakeConfig()
	cfg.Sizes = []int{1472}
	res := NewResult(result.RFC2544Test{Mode: sweep.ModeReflect})
	if err := Run(context.Background(), cfg, l, res); err != nil {
		t.Fatal(err)
	}
	sr := res.Sizes[0]
	if s := res.Test.Schedule; !s.LatencyFromConfirm || s.LatencyS != 1 || s.LossS != 1 {
		t.Errorf("schedule %+v, want 1 s latency and loss trials, the 100 %% latency from the confirming trial", s)
	}
	p := sr.Latency[3]
	if !p.FromThroughput || p.TrialS != res.Test.Schedule.ConfirmS || p.RatePPS != sr.NDR.TriedPPS || p.Timed == 0 {
		t.Errorf("latency at 100 %%: %+v, want the NDR's %g s confirming trial at %.1f/s", p, res.Test.Schedule.ConfirmS, sr.NDR.TriedPPS)
	}
	for _, p := range sr.Latency[:3] {
		if p.FromThroughput || p.TrialS != 1 {
			t.Errorf("latency at %g %%: from throughput %v, %g s, want a 1 s trial of its own", p.LoadPercent, p.FromThroughput, p.TrialS)
		}
	}
	if !sr.LossCurve[0].FromThroughput || sr.LossCurve[0].OfferedPercent != 100 || sr.LossCurve[1].FromThroughput {
		t.Errorf("loss curve: the 100 %% step from throughput %v, the 90 %% one %v; want only the first", sr.LossCurve[0].FromThroughput, sr.LossCurve[1].FromThroughput)
	}
	line, confirm, atLine := sr.LinePPS, 0, 0
	for _, s := range l.specs {
		if s.Packets == 0 && s.RatePPS == line {
			atLine++
		}
		if s.Duration == DefaultSchedule().Confirm && s.RatePPS == sr.NDR.TriedPPS {
			confirm++
		}
	}
	if atLine != 1 || confirm != 1 {
		t.Errorf("%d trials at line rate and %d confirming ones at the NDR, want 1 each (reused, not run again)", atLine, confirm)
	}
	// Without the search's trials, and RFC 2544's schedule, nothing is
	// reused: the latency point at 100 % is RFC 2544's 20 trials.
	cfg.Schedule = StrictSchedule()
	cfg.Schedule.Search, cfg.Schedule.Confirm, cfg.Schedule.Latency, cfg.Schedule.Loss, cfg.Schedule.LatencyRepeats = time.Second, 2*time.Second, time.Second, 3*time.Second, 2
	res = NewResult(result.RFC2544Test{Mode: sweep.ModeReflect})
	if err := Run(context.Background(), cfg, d, res); err != nil {
		t.Fatal(err)
	}
	sr = res.Sizes[0]
	if p := sr.Latency[3]; p.FromThroughput || p.Repeats != 2 || p.TrialS != 1 || sr.LossCurve[0].FromThroughput {
		t.Errorf("strict: latency at 100 %% %+v, loss at 100 %% from throughput %v; want trials of their own", p, sr.LossCurve[0].FromThroughput)
	}
}

// TestLateWait: the wait for late answers is four times the slowest round
// trip of the throughput trials, within 0.1 to 0.5 s, and the later gap
// the same within 50 ms up to the run's; neither without round trips.
func TestLateWait(t *testing.T) {
	log := func(maxMS ...float64) *result.SweepSize {
		s := &result.SweepSize{}
		for _, m := range maxMS {
			tr := result.SweepTrial{}
			if m > 0 {
				tr.RTT = &result.SweepRTT{Max: m}
			}
			s.TrialLog = append(s.TrialLog, tr)
		}
		return s
	}
	ms := time.Millisecond
	for _, c := range []struct {
		max  []float64
		wait time.Duration
	}{{[]float64{5, 6.25, 0}, 100 * ms}, {[]float64{30, 40}, 160 * ms}, {[]float64{400}, 500 * ms}, {[]float64{0}, 0}, {nil, 0}} {
		if w := lateWait(slowest(log(c.max...))); w != c.wait {
			t.Errorf("round trips up to %v ms: wait %v, want %v", c.max, w, c.wait)
		}
	}
}

// TestWaitLateSetsTheRunner: a reflector's later trials run with the wait
// the size's throughput trials gave (the runner a copy with its Drain
// set), and the size says it.
func TestWaitLateSetsTheRunner(t *testing.T) {
	b := &bench{cfg: Config{Gap: 200 * time.Millisecond}, r: sweep.ReflectRunner{Host: "127.0.0.1", Port: 5001}}
	sr := &result.RFC2544Size{NDR: &result.SweepSize{TrialLog: []result.SweepTrial{{SweepOutcome: result.SweepOutcome{RTT: &result.SweepRTT{Max: 40}}}}}}
	b.waitLate(sr)
	rr, ok := b.later.(sweep.ReflectRunner)
	if !ok || rr.Drain != 160*time.Millisecond || sr.LateWaitS != 0.16 {
		t.Errorf("later runner %+v; size late_wait_s %v: want 160 ms each", b.later, sr.LateWaitS)
	}
	if b.r.(sweep.ReflectRunner).Drain != 0 {
		t.Error("the throughput search's runner was changed too")
	}
}
