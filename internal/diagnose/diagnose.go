// Package diagnose runs `wirebench diagnose HOST`: a planned, bounded,
// adaptive series of short runs through sweep's runners (a reflector, a
// wirebench server, an iperf 2 server), each reasoned over by
// internal/diagnose/reason, which says what limits the link.
//
// The plan: a load run per size, the largest first, at a rate above what
// the far end delivered (the next sizes' rates follow from the first's);
// a few datagrams of a large size, bisected to the byte when they never
// arrive; the sizes between a cliff's two sides, bisected to the byte; a
// long run well under the limit for the loss floor. Every step is skipped
// when the budget left cannot hold it, and a cancelled context (Ctrl-C)
// ends the plan after the run under way, which is then dropped: a run cut
// short is no evidence. The reasoning is then made over the runs finished.
package diagnose

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/wirebench/wirebench/internal/diagnose/reason"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/pacer"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// Config is what a diagnosis does.
type Config struct {
	// Sizes are the first pass's UDP payload sizes.
	Sizes []int
	// BigSize is the size whose datagrams are checked for arriving at all
	// (0: none is checked).
	BigSize int
	// Medium is --medium: line rates, and the share of them.
	Medium linerate.Medium
	// MaxPPS is the highest rate to ask of our sender.
	MaxPPS float64
	// Trial is a load run's length; LowRate the loss floor run's.
	Trial, LowRate time.Duration
	// Budget bounds the whole diagnosis (0: none).
	Budget time.Duration
	// Gap separates runs so that queues drain.
	Gap time.Duration
	// Overhead is the time a run takes beyond its length (the drain of
	// late datagrams, the far end's report), for the budget's planning.
	Overhead time.Duration
	// OnRun, when set, is told of every run finished.
	OnRun func(p Progress)
	// Sleep waits between runs (nil: a timer).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the monotonic clock the budget is kept on (nil: time.Now).
	Now func() time.Time
	// TCP, when set, runs a TCP test of TCPLength to the far end (a
	// server: a reflector carries no TCP), compared with the UDP capacity.
	TCP       func(ctx context.Context, length time.Duration) (*result.Result, error)
	TCPLength time.Duration
	// Direction, when set, runs the UDP upload and download tests that
	// the direction finding compares (a server: a reflector carries both
	// directions in every round trip).
	Direction DirectionFunc
	// ByTime makes every run end by time, never by a datagram count: a
	// device's server ends by time (a size check of N datagrams runs for
	// the time they take at its rate).
	ByTime bool
	// Unseen is what the far end cannot show at all, said as what the
	// diagnosis cannot tell (reason.Input.Unseen).
	Unseen []string
	// Results, when not nil, is given the own result document of each
	// TCP, upload and download run by its run id (to be saved as it is).
	Results map[int]*result.Result
}

// Progress is where a diagnosis is.
type Progress struct {
	Run  result.DiagnosisRun
	Left time.Duration // budget left (0: no budget)
}

// Line is the progress line of p.
func (p Progress) Line() string {
	r := p.Run
	switch r.Purpose {
	case result.DiagnoseTCP, result.DiagnoseUpload, result.DiagnoseDownload:
		return fmt.Sprintf("diagnose: run %d, %s: %.2f Mbit/s", r.ID, r.Purpose, r.BitsPerSecond/1e6)
	}
	s := fmt.Sprintf("diagnose: run %d, %s, %d B at %.0f/s: delivered %.0f/s, %.2f %% lost", r.ID, r.Purpose, r.Size, r.SentPPS, r.DeliveredPPS, r.LossPercent)
	if p.Left > 0 {
		s += fmt.Sprintf(", %.0f s of budget left", p.Left.Seconds())
	}
	return s
}

// errBudget ends a plan whose next step the budget cannot hold.
var errBudget = errors.New("the budget is spent")

// diagnoser is one diagnosis under way.
type diagnoser struct {
	cfg      Config
	r        sweep.Runner
	doc      *result.Diagnosis
	deadline time.Time
	started  bool
}

// Run diagnoses through r into doc (made by NewResult). It returns an error
// only when a run could not be made; doc then holds what was reached.
func Run(ctx context.Context, cfg Config, r sweep.Runner, doc *result.Diagnosis) error {
	if len(cfg.Sizes) == 0 || cfg.MaxPPS <= 0 || cfg.Trial <= 0 {
		return errors.New("diagnose: sizes, a highest rate and a run length are needed")
	}
	if cfg.Sleep == nil {
		cfg.Sleep = pacer.SystemClock{}.Sleep
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	start := cfg.Now()
	d := &diagnoser{cfg: cfg, r: r, doc: doc}
	if cfg.Budget > 0 {
		d.deadline = start.Add(cfg.Budget)
	}
	err := d.plan(ctx)
	switch {
	case ctx.Err() != nil:
		doc.Interrupted = true
		doc.Warnings = append(doc.Warnings, "the diagnosis was interrupted: the findings are those the runs finished until then reach")
		err = nil
	case errors.Is(err, errBudget):
		doc.Interrupted = true
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("the budget of %s ran out before the plan ended: the findings are those reached (a longer --budget goes further)", cfg.Budget))
		err = nil
	case err != nil:
		doc.Error = err.Error()
	}
	conclude(cfg, doc)
	doc.Seconds = cfg.Now().Sub(start).Seconds()
	return err
}

// plan is the series of runs.
func (d *diagnoser) plan(ctx context.Context) error {
	if err := d.firstPass(ctx); err != nil {
		return err
	}
	if err := d.sizeLimit(ctx); err != nil {
		return err
	}
	if err := d.bisectCliffs(ctx); err != nil {
		return err
	}
	if err := d.lossFloor(ctx); err != nil {
		return err
	}
	if err := d.queue(ctx); err != nil {
		return err
	}
	if err := d.directions(ctx); err != nil {
		return err
	}
	return d.tcp(ctx)
}

// tcp runs the TCP test, when there is one to run.
func (d *diagnoser) tcp(ctx context.Context) error {
	if d.cfg.TCP == nil || d.cfg.TCPLength <= 0 {
		return nil
	}
	if d.left() < d.cfg.Gap+d.cfg.TCPLength+d.cfg.Overhead {
		return errBudget
	}
	if err := d.cfg.Sleep(ctx, d.cfg.Gap); err != nil {
		return err
	}
	started := time.Now()
	res, err := d.cfg.TCP(ctx, d.cfg.TCPLength)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil || res == nil {
		return fmt.Errorf("the TCP run: %w", orNoResult(err))
	}
	run := result.DiagnosisRun{ID: len(d.doc.Runs) + 1, Purpose: result.DiagnoseTCP, Warnings: res.Warnings, StartedAt: started.UTC()}

	if s := res.Sender; s != nil {
		run.BitsPerSecond = s.BitsPerSecond
		if t := s.TCP; t != nil {
			run.RTTMs, run.WindowBytes, run.Retransmits = float64(t.RTTMicros)/1000, float64(t.CwndBytes), t.Retransmits
		}
	}
	if rc := res.Receiver; rc != nil && rc.BitsPerSecond > 0 {
		run.BitsPerSecond = rc.BitsPerSecond // what arrived, by the far end's count
	}
	d.record(run, res)
	return nil
}

// orNoResult is err, or that the run gave no result when it is nil.
func orNoResult(err error) error {
	if err == nil {
		return errors.New("it gave no result")
	}
	return err
}

// left is the budget left (a day when there is none).
func (d *diagnoser) left() time.Duration {
	if d.deadline.IsZero() {
		return 24 * time.Hour
	}
	return d.deadline.Sub(d.cfg.Now())
}

// run makes one run of spec for purpose, when the budget holds it, and
// records it.
func (d *diagnoser) run(ctx context.Context, purpose string, spec sweep.Spec) (result.DiagnosisRun, error) {
	length := spec.Duration
	if spec.Packets > 0 {
		length = time.Duration(float64(spec.Packets) / spec.RatePPS * float64(time.Second))
		if d.cfg.ByTime {
			spec.Duration, spec.Packets = length, 0
		}
	}
	if d.left() < d.cfg.Gap+length+d.cfg.Overhead {
		return result.DiagnosisRun{}, errBudget
	}
	if d.started {
		if err := d.cfg.Sleep(ctx, d.cfg.Gap); err != nil {
			return result.DiagnosisRun{}, err
		}
	}
	d.started = true
	started := time.Now()
	o, err := d.r.Trial(ctx, spec)
	if ctx.Err() != nil {
		return result.DiagnosisRun{}, ctx.Err()
	}
	if err != nil {
		return result.DiagnosisRun{}, fmt.Errorf("run of %d B at %.0f datagrams/s: %w", spec.Size, spec.RatePPS, err)
	}
	run := observe(len(d.doc.Runs)+1, purpose, spec, o, d.linePPS(spec.Size))
	run.StartedAt = started.UTC()
	d.record(run, nil)
	return run, nil
}

// linePPS is the medium's highest packet rate for size (0: unknown).
func (d *diagnoser) linePPS(size int) float64 {
	b, err := linerate.Analyze(d.cfg.Medium, linerate.Stack{Transport: linerate.UDP}, size)
	if err != nil {
		return 0
	}
	return b.PacketsPerSecond
}

// lineBits is what one datagram of size bytes costs on the medium's line.
func (d *diagnoser) lineBits(size int) float64 {
	b, err := linerate.Analyze(d.cfg.Medium, linerate.Stack{Transport: linerate.UDP}, size)
	if err != nil || b.WireBits <= 0 {
		return float64(size+28) * 8
	}
	return b.WireBits
}

// ask is the rate to ask for a load run of size: above the medium's
// packet rate (so that the medium, when it is the limit, shows as one),
// above what the far end delivered at the size measured first (1.5 × the
// higher of a flat frame rate and a flat bit rate from there), and never
// above MaxPPS.
func (d *diagnoser) ask(size int, first *result.DiagnosisRun) float64 {
	r := d.cfg.MaxPPS
	if line := d.linePPS(size); line > 0 {
		r = min(r, 1.1*line)
	}
	if first != nil && reason.Limited(*first) {
		byBytes := first.DeliveredPPS * d.lineBits(first.Size) / d.lineBits(size)
		r = min(r, 1.5*math.Max(first.DeliveredPPS, byBytes))
	}
	return math.Round(r)
}

// firstPass makes load runs per size, the largest size first: two, and
// up to five until two of them agree (reason.Best), so that runs this host
// spoiled do not make a limit.
func (d *diagnoser) firstPass(ctx context.Context) error {
	var first *result.DiagnosisRun
	for i := len(d.cfg.Sizes) - 1; i >= 0; i-- {
		size := d.cfg.Sizes[i]
		for try := 0; try < 5; try++ {
			if _, agreed, _ := reason.Best(d.doc.Runs, size); try >= 2 && agreed {
				break
			}
			if _, err := d.run(ctx, result.DiagnoseLoad, sweep.Spec{Size: size, RatePPS: d.ask(size, first), Duration: d.cfg.Trial}); err != nil {
				return err
			}
		}
		if first == nil {
			best, _, _ := reason.Best(d.doc.Runs, size)
			first = &best
		}
	}
	return nil
}

// sizeProbe is a few datagrams of size at a low rate: do they arrive? A
// size of which none arrived is tried once more: a run this host spoiled
// (a reflector here descheduled past the drain) is no size limit.
func (d *diagnoser) sizeProbe(ctx context.Context, size int) (bool, error) {
	for range 2 {
		run, err := d.run(ctx, result.DiagnoseSize, sweep.Spec{Size: size, RatePPS: 200, Packets: 20})
		if err != nil || run.Received > 0 {
			return run.Received > 0, err
		}
	}
	return false, nil
}

// sizeLimit checks BigSize and, when it never arrives, bisects the sizes
// between the largest that did and it.
func (d *diagnoser) sizeLimit(ctx context.Context) error {
	if d.cfg.BigSize <= 0 {
		return nil
	}
	good := 0
	for _, run := range d.doc.Runs {
		if run.Received > 0 {
			good = max(good, run.Size)
		}
	}
	if good == 0 || good >= d.cfg.BigSize {
		return nil
	}
	bad := d.cfg.BigSize
	ok, err := d.sizeProbe(ctx, bad)
	if err != nil || ok {
		return err
	}
	for bad > good+1 {
		mid := (good + bad) / 2
		ok, err := d.sizeProbe(ctx, mid)
		if err != nil {
			return err
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
	}
	return nil
}

// bisectCliffs runs the sizes between each cliff's sides until it is
// exact, then runs its first bad size once more: a run this host spoiled
// shows a size on the low side of a cliff it is not on, and the better of
// two runs moves the cliff where it belongs.
func (d *diagnoser) bisectCliffs(ctx context.Context) error {
	confirmed := map[int]bool{}
	retried := map[int]bool{}
	for range 64 {
		var c *reason.Cliff
		for _, x := range reason.Cliffs(d.doc.Runs) {
			if !x.Exact() || !confirmed[x.Above] {
				c = &x
				break
			}
		}
		if c == nil {
			return nil
		}
		size := (c.Below + c.Above) / 2
		if c.Exact() {
			size = c.Above
			confirmed[size] = true
		}
		run, err := d.run(ctx, result.DiagnoseBisect, sweep.Spec{Size: size, RatePPS: math.Round(min(d.cfg.MaxPPS, 1.5*c.RateBelow)), Duration: d.cfg.Trial})
		if err != nil {
			return err
		}
		if best, _, _ := reason.Best(d.doc.Runs, size); !c.Exact() && (best.Received == 0 || (!reason.Limited(best) && !reason.Side(*c, best))) {
			// Neither side's: once more, then the bisection cannot go on.
			if !retried[size] {
				retried[size] = true
				continue
			}
			d.doc.Warnings = append(d.doc.Warnings, fmt.Sprintf("the cliff between %d and %d B: %d B fits neither side (delivered %.0f/s of %.0f/s sent), so it was not bisected further", c.Below, c.Above, size, run.DeliveredPPS, run.SentPPS))
			return nil
		}
	}
	return nil
}

// maxQueueRun is the longest queue run: it fills a queue of about 2 s.
const maxQueueRun = 4 * time.Second

// queue measures the queue in front of a limit, where round trips are
// timed (a reflector): a run at the largest size that hit a limit, at
// twice what it delivered, so that the queue fills at one second of delay
// per second of sending (a load run at 1.5 × fills at half that, and one
// of 500 ms ends before a queue of 200 ms is full). The run starts at
// twice Trial (1 s at least) and doubles up to maxQueueRun until its round
// trip settles with datagrams dropped: a queue that was full.
func (d *diagnoser) queue(ctx context.Context) error {
	var at *result.DiagnosisRun
	for i := len(d.cfg.Sizes) - 1; i >= 0 && at == nil; i-- {
		if best, _, ok := reason.Best(d.doc.Runs, d.cfg.Sizes[i]); ok && best.RTTLateMs > 0 && reason.Limited(best) {
			at = &best
		}
	}
	if at == nil {
		return nil
	}
	rate := math.Round(min(d.cfg.MaxPPS, 2*at.DeliveredPPS))
	for length := max(2*d.cfg.Trial, time.Second); length <= maxQueueRun; length *= 2 {
		run, err := d.run(ctx, result.DiagnoseQueue, sweep.Spec{Size: at.Size, RatePPS: rate, Duration: length})
		if err != nil {
			return err
		}
		// What the queue held drains before the next run.
		if err := d.cfg.Sleep(ctx, time.Duration(run.RTTLateMs*float64(time.Millisecond))); err != nil {
			return err
		}
		if run.RTTLateMs <= 0 || (run.RTTSettled && run.LossPercent > 1) {
			return nil
		}
	}
	return nil
}

// lossFloor runs well under the limit (a quarter of what the largest size
// delivered, or of what we sent when it hit none) for LowRate.
func (d *diagnoser) lossFloor(ctx context.Context) error {
	var at *result.DiagnosisRun
	for i, run := range d.doc.Runs {
		if run.Purpose == result.DiagnoseLoad && run.Received > 0 && (at == nil || run.Size > at.Size) {
			at = &d.doc.Runs[i]
		}
	}
	if at == nil || d.cfg.LowRate <= 0 {
		return nil
	}
	rate := math.Round(at.DeliveredPPS / 4)
	if rate < 50 {
		return nil
	}
	// Enough datagrams to tell a loss of 1 % to ±0.3 (5,000), in no
	// less than LowRate and no more than four times it.
	length := min(max(d.cfg.LowRate, time.Duration(5000/rate*float64(time.Second))), 4*d.cfg.LowRate)
	_, err := d.run(ctx, result.DiagnoseLowRate, sweep.Spec{Size: at.Size, RatePPS: rate, Duration: length})
	return err
}
