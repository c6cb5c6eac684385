package diagnose

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// fakeDevice answers trials as a device that serves at most fps frames/s
// and drops datagrams over maxSize, with no network: the plan's steps
// tested alone.
type fakeDevice struct {
	fps     float64
	maxSize int
	trials  []sweep.Spec
	cancel  func() // called at the trial numbered cancelAt
	at      int
	// queue, when set, is a tail-drop queue of that many seconds in
	// front of fps, whose round trips each trial reports.
	queue float64
}

// queued serves the datagrams of s, sent evenly, through a queue of
// f.queue seconds in front of f.fps: what is received and each one's
// round trip, in arrival order.
func (f *fakeDevice) queued(s sweep.Spec, o *result.SweepOutcome) {
	n := int(o.Sent)
	var depart float64
	for i := range n {
		at := float64(i) / s.RatePPS
		start := max(at, depart)
		if start-at > f.queue {
			continue // the queue is full: dropped
		}
		depart = start + 1/f.fps
		o.RTTs = append(o.RTTs, time.Duration((depart-at)*float64(time.Second)))
	}
	o.Received = int64(len(o.RTTs))
	o.ReceiveSeconds = float64(o.Received-1) / min(s.RatePPS, f.fps)
	o.RTT = &result.SweepRTT{Min: float64(slices.Min(o.RTTs)) / 1e6}
}

func (f *fakeDevice) Trial(_ context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	f.trials = append(f.trials, s)
	if f.cancel != nil && len(f.trials) == f.at {
		f.cancel()
	}
	secs := s.Duration.Seconds()
	if s.Packets > 0 {
		secs = float64(s.Packets) / s.RatePPS
	}
	sent := int64(s.RatePPS * secs)
	o := result.SweepOutcome{Sent: sent, OfferedPPS: s.RatePPS, SendSeconds: secs}
	if f.maxSize > 0 && s.Size > f.maxSize {
		return o, nil
	}
	if f.queue > 0 {
		f.queued(s, &o)
		return o, nil
	}
	rate := min(s.RatePPS, f.fps)
	o.Received = int64(rate * secs)
	o.ReceiveSeconds = float64(o.Received-1) / rate
	return o, nil
}

func planConfig(t *testing.T) Config {
	m, err := linerate.LookupMedium("eth1g")
	if err != nil {
		t.Fatal(err)
	}
	return Config{Sizes: []int{256, 512, 1024, 1470}, BigSize: 8000, Medium: m, MaxPPS: 20000, Trial: 500 * time.Millisecond,
		LowRate: time.Second, Sleep: func(context.Context, time.Duration) error { return nil }}
}

func TestPlanFrameLimitAndSizeLimit(t *testing.T) {
	dev := &fakeDevice{fps: 7000, maxSize: 3000}
	doc := NewResult(result.DiagnosisTest{})
	if err := Run(context.Background(), planConfig(t), dev, doc); err != nil {
		t.Fatal(err)
	}
	// Two load runs per size, the largest first at the highest rate, the
	// next at 1.5 × what a flat bit rate from there predicts (capped).
	if s := dev.trials[0]; s.Size != 1470 || s.RatePPS != 20000 {
		t.Errorf("first run %+v, want 1470 B at 20000/s", s)
	}
	if s := dev.trials[2]; s.Size != 1024 || s.RatePPS < 14700 || s.RatePPS > 14900 {
		t.Errorf("third run %+v, want 1024 B at about 14,800/s", s)
	}
	var kinds []string
	for _, f := range doc.Findings {
		kinds = append(kinds, f.Kind)
	}
	if got := strings.Join(kinds, ","); got != "frame_rate_limit,per_frame_cost,size_limit" {
		t.Errorf("findings %s", got)
	}
	if f := doc.Findings[2]; f.Figures["max_size"] != 3000 {
		t.Errorf("size limit %+v", f)
	}
	if doc.Interrupted || len(doc.Warnings) != 0 {
		t.Errorf("a plan that ended: interrupted %v, warnings %q", doc.Interrupted, doc.Warnings)
	}
	if last := doc.Runs[len(doc.Runs)-1]; last.Purpose != result.DiagnoseLowRate || last.AskedPPS != 1750 {
		t.Errorf("last run %+v, want the low-rate run at 1750/s", last)
	}
}

func TestPlanBudgetGivesFindingsSoFar(t *testing.T) {
	cfg := planConfig(t)
	// Room for the first pass only: the budget is checked before each run
	// against its length and Overhead.
	cfg.Budget, cfg.Overhead = 4050*time.Millisecond, 0
	dev := &fakeDevice{fps: 7000, maxSize: 3000}
	doc := NewResult(result.DiagnosisTest{})
	// A fake clock: each run takes its length.
	now := time.Unix(0, 0)
	cfg.Now = func() time.Time { return now }
	r := sweep.RunnerFunc(func(ctx context.Context, s sweep.Spec) (result.SweepOutcome, error) {
		now = now.Add(s.Duration + time.Duration(float64(s.Packets)/s.RatePPS*float64(time.Second)))
		return dev.Trial(ctx, s)
	})
	if err := Run(context.Background(), cfg, r, doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Interrupted || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "budget") {
		t.Errorf("interrupted %v, warnings %q", doc.Interrupted, doc.Warnings)
	}
	if len(doc.Runs) != 8 {
		t.Errorf("%d runs in a budget for 8", len(doc.Runs))
	}
	if doc.Verdict == "" {
		t.Error("no verdict from the runs made")
	}
}

func TestPlanInterruptKeepsFinishedRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dev := &fakeDevice{fps: 7000, cancel: cancel, at: 5}
	doc := NewResult(result.DiagnosisTest{})
	if err := Run(ctx, planConfig(t), dev, doc); err != nil {
		t.Fatal(err)
	}
	// The run under way when Ctrl-C came is dropped: it is no evidence.
	if !doc.Interrupted || len(doc.Runs) != 4 {
		t.Fatalf("interrupted %v with %d runs, want 4", doc.Interrupted, len(doc.Runs))
	}
	if f := doc.Findings; len(f) == 0 || f[0].Kind != result.FindingFrameRate {
		t.Errorf("findings of the 4 runs: %+v", f)
	}
}

func TestPlanRunErrorEnds(t *testing.T) {
	r := sweep.RunnerFunc(func(context.Context, sweep.Spec) (result.SweepOutcome, error) {
		return result.SweepOutcome{}, errors.New("connection refused")
	})
	doc := NewResult(result.DiagnosisTest{})
	err := Run(context.Background(), planConfig(t), r, doc)
	if err == nil || !strings.Contains(doc.Error, "connection refused") || len(doc.Runs) != 0 {
		t.Errorf("err %v, doc error %q, %d runs", err, doc.Error, len(doc.Runs))
	}
}

// TestPlanQueueRun: load runs of 250 ms at 9,000/s end long before a
// queue in front of 7,000/s fills (200 ms of queue fill in 0.7 s of
// sending, 500 ms in 1.75 s), so their round trips still rise; the queue
// run, from 1 s and doubled until its round trip settles with datagrams
// dropped, measures the whole queue.
func TestPlanQueueRun(t *testing.T) {
	for _, c := range []struct {
		queue   float64
		lengths []time.Duration
	}{
		{0.2, []time.Duration{time.Second}},
		{0.5, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
	} {
		dev := &fakeDevice{fps: 7000, queue: c.queue}
		cfg := planConfig(t)
		cfg.MaxPPS, cfg.Trial, cfg.LowRate, cfg.BigSize = 9000, 250*time.Millisecond, 0, 0
		doc := NewResult(result.DiagnosisTest{})
		if err := Run(context.Background(), cfg, dev, doc); err != nil {
			t.Fatal(err)
		}
		var lengths []time.Duration
		for _, run := range doc.Runs {
			if run.Purpose == result.DiagnoseLoad && run.RTTSettled {
				t.Errorf("queue %v s: load run %d settled: %+v", c.queue, run.ID, run)
			}
			if run.Purpose == result.DiagnoseQueue {
				lengths = append(lengths, dev.trials[run.ID-1].Duration)
			}
		}
		if !slices.Equal(lengths, c.lengths) {
			t.Errorf("queue %v s: queue runs of %v, want %v", c.queue, lengths, c.lengths)
		}
		f := doc.Findings[len(doc.Findings)-1]
		if want := 1000 * c.queue; f.Kind != result.FindingQueue || f.Confidence != result.ConfidenceHigh || f.Figures["queue_ms"] < want-1 || f.Figures["queue_ms"] > want+1 {
			t.Errorf("queue %v s: finding %+v, want %.0f ms, high", c.queue, f, want)
		}
	}
}

// TestPlanDirections: an upload and a download run at the largest size,
// each with its own document kept; a download the server refuses is a
// warning, and the plan goes on.
func TestPlanDirections(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		cfg := planConfig(t)
		cfg.LowRate, cfg.BigSize, cfg.Results = 0, 0, map[int]*result.Result{}
		var asked []float64
		cfg.Direction = func(_ context.Context, down bool, size int, pps float64, length time.Duration) (*result.Result, error) {
			asked = append(asked, pps)
			if down && refuse {
				return nil, errors.New("the server does not send (-R)")
			}
			r := result.New("client")
			bps := map[bool]float64{false: 40e6, true: 80e6}[down]
			r.Receiver = &result.Receiver{BitsPerSecond: bps, Packets: int64(bps / 8 / float64(size) * length.Seconds()), Seconds: length.Seconds()}
			return r, nil
		}
		tcp := false
		cfg.TCP, cfg.TCPLength = func(context.Context, time.Duration) (*result.Result, error) {
			tcp = true
			return &result.Result{Sender: &result.Sender{BitsPerSecond: 39e6}}, nil
		}, time.Second
		doc := NewResult(result.DiagnosisTest{})
		if err := Run(context.Background(), cfg, &fakeDevice{fps: 7000}, doc); err != nil {
			t.Fatal(err)
		}
		if !tcp || len(asked) != 2 || asked[0] != 20000 {
			t.Errorf("refuse %v: tcp run %v, directions asked %v (want 2 at 20000/s)", refuse, tcp, asked)
		}
		_, found := figure(doc, result.FindingDirection, "")
		warned := len(doc.Warnings) == 1 && strings.Contains(doc.Warnings[0], "download run could not be made")
		if found == refuse || warned != refuse {
			t.Errorf("refuse %v: direction found %v, warnings %q", refuse, found, doc.Warnings)
		}
		if !refuse && len(cfg.Results) != 3 {
			t.Errorf("%d own documents kept, want the upload's, the download's and the TCP run's", len(cfg.Results))
		}
	}
}
