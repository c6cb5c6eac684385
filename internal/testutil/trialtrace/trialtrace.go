// Package trialtrace records the trials of a real sweep or RFC 2544 run
// (what was asked, what came back, when each started and ended on the
// monotonic clock) and replays them: a Replay answers the same trials with
// the recorded outcomes and moves a fake clock as the recorded run's clock
// moved, so a test runs the real search against a recorded far end and
// host, deterministically and in no time.
package trialtrace

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// Trial is one recorded trial.
type Trial struct {
	Size    int                 `json:"size"`
	RatePPS float64             `json:"rate_pps"`
	TrialS  float64             `json:"trial_s,omitempty"`
	Packets int64               `json:"packets,omitempty"`
	StartS  float64             `json:"start_s"` // since the run's start
	EndS    float64             `json:"end_s"`
	Outcome result.SweepOutcome `json:"outcome"`
	// The outcome's fields the document leaves out: RTTs are only
	// counted (the latency test's figures are not what a replay checks).
	StallLagsS   []float64 `json:"stall_lags_s,omitempty"`
	StallsCut    bool      `json:"stalls_cut,omitempty"`
	BacklogKnown bool      `json:"backlog_known,omitempty"`
	RTTCount     int       `json:"rtt_count,omitempty"`
}

// Trace is a recorded run: the command it was, its trials in order and
// the run's whole length.
type Trace struct {
	Command string  `json:"command"`
	Trials  []Trial `json:"trials"`
	EndS    float64 `json:"end_s"`
}

// Recorder wraps a runner and records its trials.
type Recorder struct {
	R     sweep.Runner
	start time.Time
	mu    sync.Mutex
	tr    Trace
}

// NewRecorder records r's trials from now on.
func NewRecorder(command string, r sweep.Runner) *Recorder {
	return &Recorder{R: r, start: time.Now(), tr: Trace{Command: command, Trials: []Trial{}}}
}

// Trial runs s through the wrapped runner and records it.
func (r *Recorder) Trial(ctx context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	begin := time.Since(r.start)
	o, err := r.R.Trial(ctx, s)
	end := time.Since(r.start)
	if err != nil {
		return o, err
	}
	t := Trial{Size: s.Size, RatePPS: s.RatePPS, TrialS: s.Duration.Seconds(), Packets: s.Packets, StartS: begin.Seconds(), EndS: end.Seconds(),
		Outcome: o, StallLagsS: o.StallLagsS, StallsCut: o.StallsCut, BacklogKnown: o.BacklogKnown, RTTCount: len(o.RTTs)}
	t.Outcome.RTTs, t.Outcome.Arrivals = nil, nil
	r.mu.Lock()
	r.tr.Trials = append(r.tr.Trials, t)
	r.mu.Unlock()
	return o, nil
}

// Save writes the trace, ended now, to path.
func (r *Recorder) Save(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tr.EndS = time.Since(r.start).Seconds()
	b, err := json.Marshal(r.tr)
	if err != nil {
		return fmt.Errorf("encoding the trace: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("saving the trace: %w", err)
	}
	return nil
}

// Load reads a trace saved by Recorder.Save.
func Load(path string) (*Trace, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the trace: %w", err)
	}
	var tr Trace
	if err := json.Unmarshal(b, &tr); err != nil {
		return nil, fmt.Errorf("decoding the trace %s: %w", path, err)
	}
	return &tr, nil
}

// Replay answers trials from a trace on a fake clock that starts at the
// run's start and reads, after trial i, its recorded end; a Sleep between
// trials moves it to the next trial's recorded start (the gap as it was).
type Replay struct {
	tr   *Trace
	next int
	base time.Time
	now  time.Duration
}

// NewReplay replays tr.
func NewReplay(tr *Trace) *Replay { return &Replay{tr: tr, base: time.Now()} }

// Now is the fake clock.
func (p *Replay) Now() time.Time { return p.base.Add(p.now) }

// Elapsed is the fake clock's reading since the run's start.
func (p *Replay) Elapsed() time.Duration { return p.now }

// Left is the time the recorded run really had left at this point.
func (p *Replay) Left() time.Duration { return secs(p.tr.EndS) - p.now }

// Done says whether every recorded trial was replayed.
func (p *Replay) Done() bool { return p.next == len(p.tr.Trials) }

// Sleep moves the clock to the next trial's recorded start.
func (p *Replay) Sleep(ctx context.Context, d time.Duration) error {
	if p.next < len(p.tr.Trials) {
		p.now = max(p.now, secs(p.tr.Trials[p.next].StartS))
	}
	return ctx.Err()
}

// Trial answers s with the next recorded outcome; a trial other than the
// one recorded is an error (the search took another path).
func (p *Replay) Trial(ctx context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	if p.next >= len(p.tr.Trials) {
		return result.SweepOutcome{}, fmt.Errorf("replay: trial %d (%d B at %.0f/s) beyond the %d recorded", p.next+1, s.Size, s.RatePPS, len(p.tr.Trials))
	}
	t := p.tr.Trials[p.next]
	if t.Size != s.Size || math.Abs(t.RatePPS-s.RatePPS) > 1e-6*t.RatePPS || t.Packets != s.Packets || math.Abs(t.TrialS-s.Duration.Seconds()) > 1e-9 {
		return result.SweepOutcome{}, fmt.Errorf("replay: trial %d asked %d B at %.3f/s for %v/%d datagrams, recorded %d B at %.3f/s for %gs/%d",
			p.next+1, s.Size, s.RatePPS, s.Duration, s.Packets, t.Size, t.RatePPS, t.TrialS, t.Packets)
	}
	p.next++
	p.now = max(p.now, secs(t.StartS))
	p.now = max(p.now, secs(t.EndS))
	o := t.Outcome
	o.StallLagsS, o.StallsCut, o.BacklogKnown = t.StallLagsS, t.StallsCut, t.BacklogKnown
	if o.RTT != nil && t.RTTCount > 0 {
		// The round trips' summary as recorded, so that a run that takes
		// a trial's latency from it (RFC 2544's from the NDR's
		// confirmation) takes the same path; the figures are not what a
		// replay checks.
		o.RTTDist = &result.RTTSummary{Count: int64(t.RTTCount), Min: o.RTT.Min, Mean: o.RTT.Mean, Max: o.RTT.Max, P50: o.RTT.P50, P99: o.RTT.P99}
	}
	return o, ctx.Err()
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Point is one progress update of a replayed run: the run's time so far,
// the estimate of the time left it showed, and the time that really was
// left (the recorded run's end less the time so far).
type Point struct {
	Elapsed, Estimate, Actual time.Duration
}

// Verdict is what Check found: the updates that rose more than allowed,
// those off by more than allowed, and how many updates were judged on
// that (from the share of the run on).
type Verdict struct {
	Rises, Misses []string
	Judged        int
}

// Within is the share of the judged updates that were within the bound.
func (v Verdict) Within() float64 {
	if v.Judged == 0 {
		return 1
	}
	return 1 - float64(len(v.Misses))/float64(v.Judged)
}

// Check judges a run's estimates of the time left: from the share from of
// the run's length total in, each within the share tol of the time that
// really was left (judged as a progress line shows it, to the second:
// half a second of rounding is allowed beside the share), and throughout,
// none above zero more than rise times the one above zero before it.
func Check(ps []Point, total time.Duration, from, tol, rise float64) Verdict {
	var v Verdict
	var prev time.Duration
	for i, p := range ps {
		if prev > 0 && float64(p.Estimate) > rise*float64(prev) {
			v.Rises = append(v.Rises, fmt.Sprintf("update %d at %v: the estimate rose from %v to %v, more than %g×", i+1, p.Elapsed.Round(time.Second), prev.Round(time.Second), p.Estimate.Round(time.Second), rise))
		}
		if p.Estimate > 0 {
			prev = p.Estimate
		}
		if float64(p.Elapsed) < from*float64(total) {
			continue
		}
		v.Judged++
		if miss := math.Abs(float64(p.Estimate - p.Actual)); miss > tol*float64(p.Actual)+float64(time.Second/2) {
			v.Misses = append(v.Misses, fmt.Sprintf("update %d at %v: estimated %v left, really %v (off by %.0f %%)", i+1, p.Elapsed.Round(time.Second), p.Estimate.Round(time.Second), p.Actual.Round(time.Second), 100*miss/float64(max(p.Actual, time.Millisecond))))
		}
	}
	return v
}

// Surveyed is tr, a sweep recorded before the sweep's survey, as it would
// have run with one: the first trial of each of sizes (the first of its
// search: the highest rate, a search trial long) moved ahead of all the
// others, in the order of sizes, each trial keeping its own length and
// the pause before it. The outcomes are the recorded ones: a recording
// made on a host too loaded to record again at will keeps its use.
func Surveyed(tr *Trace, sizes []int) *Trace {
	first := map[int]int{}
	for i, t := range tr.Trials {
		if _, ok := first[t.Size]; !ok {
			first[t.Size] = i
		}
	}
	var order []int
	moved := map[int]bool{}
	for _, z := range sizes {
		if i, ok := first[z]; ok {
			order, moved[i] = append(order, i), true
		}
	}
	for i := range tr.Trials {
		if !moved[i] {
			order = append(order, i)
		}
	}
	out := &Trace{Command: tr.Command, Trials: make([]Trial, 0, len(tr.Trials))}
	var now float64
	for _, i := range order {
		t := tr.Trials[i]
		pause, took := t.StartS, t.EndS-t.StartS
		if i > 0 {
			pause = t.StartS - tr.Trials[i-1].EndS
		}
		t.StartS = now + pause
		t.EndS = t.StartS + took
		now = t.EndS
		out.Trials = append(out.Trials, t)
	}
	tail := 0.0
	if n := len(tr.Trials); n > 0 {
		tail = tr.EndS - tr.Trials[n-1].EndS
	}
	out.EndS = now + tail
	return out
}
