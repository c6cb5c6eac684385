package sweep

import (
	"context"
	"errors"
	"fmt"
	"github.com/wirebench/wirebench/internal/priority"
	"math"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/eta"
	"github.com/wirebench/wirebench/internal/mlrsearch"
	"github.com/wirebench/wirebench/internal/pacer"
	"github.com/wirebench/wirebench/internal/result"
)

// Spec is one trial to run: datagrams of Size payload bytes at RatePPS,
// for Duration or, when Packets > 0, for that many datagrams.
type Spec struct {
	Size     int
	RatePPS  float64
	Duration time.Duration
	Packets  int64
}

// Runner runs one trial. It returns an error only when the trial could not
// be made (the far end is unreachable, a socket failed); a trial that ran
// returns its result.SweepOutcome however bad the figures.
type Runner interface {
	Trial(ctx context.Context, s Spec) (result.SweepOutcome, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, s Spec) (result.SweepOutcome, error)

// Trial calls f.
func (f RunnerFunc) Trial(ctx context.Context, s Spec) (result.SweepOutcome, error) { return f(ctx, s) }

// Config is what a sweep does.
type Config struct {
	// Sizes are the UDP payload sizes to search, in any order (searched
	// ascending).
	Sizes []int
	// MaxPPS is the highest rate to try for a size (the medium's maximum
	// packet rate, or the user's limit). Required.
	MaxPPS func(size int) float64
	// LinePPS is the medium's maximum packet rate for a size, for the
	// "% of line" column; nil when no medium is known.
	LinePPS func(size int) float64
	// LossPercent is the pass criterion: at most this share lost (0 = none).
	LossPercent float64
	// Trial and Packets bound each trial: a duration, or a fixed count of
	// datagrams when Packets > 0.
	Trial   time.Duration
	Packets int64
	// Confirm is how long the confirming trial at the rate a search found
	// lasts (RFC 2544 uses 60 s): the rate is reported only when a trial
	// that long passes at it; the multi-rate search's trials grow towards
	// it (see SearchTargets). 0, or a Confirm no longer than Trial, makes
	// every trial that long: a pass is its own confirmation. With Packets
	// (sweep's own search) 0 confirms with one more trial of the search's
	// own length, and the confirming trial sends enough datagrams to last
	// Confirm at the rate.
	Confirm time.Duration
	// Repeat is how many searches to run per size (default 1).
	Repeat int
	// NoBisect leaves cliffs between the sizes asked for, without bisecting
	// the sizes between them.
	NoBisect bool
	// Gap separates trials so that queues drain (default 200 ms).
	Gap time.Duration
	// MaxSilent ends the sweep with an error after this many trials in a
	// row without the far end's counts (default 3): nothing answers.
	MaxSilent int
	// MaxTrials bounds one search (default 14).
	MaxTrials int
	// Resolution ends a search once the failing rate is within this share
	// above the passing one (default 0.01).
	Resolution float64
	// PaceTolerance is how much the far end's queue may grow in a trial,
	// as a share of its send window (default 0.005): the rate we offered
	// may exceed the rate it delivered by at most this much before the
	// trial counts as not kept up with.
	PaceTolerance float64
	// BacklogFloor is the least backlog that fails a trial: the timing
	// resolution of the receive window. A server's report times its window
	// from its first and last datagram alone, so a few milliseconds of
	// scheduling at either end look like a queue; a reflector's backlog
	// comes from medians of many round trips and needs none (0). With a
	// floor, the 0.5 % bound holds for trials of BacklogFloor/PaceTolerance
	// and longer (4 s for 20 ms: the default 10 s confirmation).
	BacklogFloor time.Duration
	// CliffDrop is the fall of the byte rate from one size to the next
	// larger one that counts as a cliff (default 0.2: a fifth).
	CliffDrop float64
	// Spoiled is the test of whether this host spoiled a trial that
	// failed (its reason, "" when not), beside the stall rule (see
	// Verdict); a spoiled trial is judged VerdictStall. Run, when it is
	// nil, judges each size's trials with a StallJudge of its own (the
	// far end's queue room from a reflector's round trips), as RFC 2544's
	// throughput searches do.
	Spoiled func(s Spec, o result.SweepOutcome) string
	// StallRetries is how many times a trial judged VerdictStall is run
	// again at the same rate before it counts as VerdictHost (default 1).
	StallRetries int
	// OnTrial, when set, is called after every trial (for progress).
	OnTrial func(p Progress)
	// Sleep waits between trials; nil uses a timer (tests pass a fake).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the monotonic clock for the progress's times; nil uses
	// time.Now (tests pass a fake).
	Now func() time.Time
}

// Progress is where a sweep is, for a progress line.
type Progress struct {
	Size    int
	Repeat  int // 1-based repetition
	Trial   int // 1-based trial of this search
	RatePPS float64
	Outcome result.SweepOutcome
	Verdict string // VerdictPass, VerdictLoss, VerdictPace, VerdictHost or VerdictStall
	// Verdicts are a multi-rate search's verdicts, one per criterion
	// (SearchTargets), and Phase its phase (1 first); nil and 0 otherwise.
	Verdicts []string
	Phase    int
	Done     int // searches finished
	Planned  int // searches planned so far (grows when a cliff is bisected)
	Elapsed  time.Duration
	Bisected bool // the size was added by cliff bisection
	// Rerun says the trial was this host's doing (observe): asked again
	// after this host spoiled the one before, or run after a rate this
	// host could not test (spoiled every time it ran).
	Rerun bool
	// Survey says the trial was the survey's (Trial counts the sizes
	// surveyed): the first trial of every planned size's search, run
	// before the searches, which use it as theirs (and do not tell it
	// again).
	Survey bool
	// Spec is the trial that ran.
	Spec Spec
	// Left estimates the time the sweep has left (internal/eta): the
	// trials its searches still need, from their structure, at the cost
	// per trial measured so far; SearchLeft is the work the search under
	// way still needs.
	Left       time.Duration
	SearchLeft eta.Part
}

// ETA is the estimate of the time left (Left).
func (p Progress) ETA() time.Duration { return p.Left }

// Trial verdicts.
const (
	VerdictPass = "pass"
	VerdictLoss = "loss"         // more loss than the criterion
	VerdictPace = "backlog"      // the far end fell behind our pace: a queue was filling
	VerdictHost = "host_limited" // this host did not offer the rate asked for
	// VerdictStall: the trial failed after our sender stalled and caught
	// up in a burst; a queue the burst filled is no evidence against the
	// far end, so the rate is tried once more.
	VerdictStall = "host_stalled"
)

// UnstableCIPercent is the half-width of the 95 % interval, as a share of
// the mean, above which a size's repetitions are too spread to trust.
const UnstableCIPercent = 5.0

func (c *Config) defaults() {
	if c.Repeat <= 0 {
		c.Repeat = 1
	}
	if c.Gap <= 0 {
		c.Gap = 200 * time.Millisecond
	}
	if c.MaxSilent <= 0 {
		c.MaxSilent = 3
	}
	if c.MaxTrials <= 0 {
		c.MaxTrials = 14
	}
	if c.Resolution <= 0 {
		c.Resolution = 0.01
	}
	if c.PaceTolerance <= 0 {
		c.PaceTolerance = 0.005
	}
	if c.StallRetries <= 0 {
		c.StallRetries = 1
	}
	if c.CliffDrop <= 0 {
		c.CliffDrop = 0.2
	}
	if c.Sleep == nil {
		c.Sleep = pacer.SystemClock{}.Sleep
	}
}

// Validate checks a configuration.
func (c *Config) Validate() error {
	if len(c.Sizes) == 0 {
		return errors.New("sweep: no sizes")
	}
	for _, s := range c.Sizes {
		if s < 16 || s > 65507 {
			return fmt.Errorf("sweep: size %d: want 16 to 65507 bytes of UDP payload", s)
		}
	}
	if c.MaxPPS == nil {
		return errors.New("sweep: no highest rate to start from")
	}
	if c.Trial <= 0 && c.Packets <= 0 {
		return errors.New("sweep: a trial needs a duration or a packet count")
	}
	if c.Confirm < 0 {
		return fmt.Errorf("sweep: confirming trial of %v: want 0 (none) or more", c.Confirm)
	}
	if c.LossPercent < 0 || c.LossPercent >= 100 || math.IsNaN(c.LossPercent) {
		return fmt.Errorf("sweep: loss criterion %v %%: want 0 to below 100", c.LossPercent)
	}
	return nil
}

// NewResult returns an empty document for test, ready to fill.
func NewResult(test result.SweepTest) *result.Sweep {
	return &result.Sweep{Schema: result.Schema, Kind: result.KindSweep, StartedAt: time.Now().UTC(), Test: test,
		Sizes: []result.SweepSize{}, Cliffs: []result.SweepCliff{}, Warnings: []string{}}
}

// hostStalled says whether a trial of sizes was spoiled by this host's
// sender (stalled, or limited by it).
func hostStalled(sizes []result.SweepSize) bool {
	for _, sr := range sizes {
		for _, tr := range sr.TrialLog {
			if tr.Verdict == VerdictStall || tr.Verdict == VerdictHost {
				return true
			}
		}
	}
	return false
}

// Run sweeps cfg.Sizes with r into res (made by NewResult). When ctx ends
// it stops after the trial under way, marks res interrupted and returns
// what was finished; other errors (a trial that could not be made) end
// the sweep with res holding the sizes done and Error set.
func Run(ctx context.Context, cfg Config, r Runner, res *result.Sweep) error {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Spoiled == nil {
		cfg.Spoiled = sizeJudges()
	}
	pacing := priority.Summary()
	s := &sweeper{cfg: cfg, r: r, res: res, start: cfg.now(), done: map[int]*result.SweepSize{}}
	s.est = eta.New(s.start)
	// A search's structure (what it needs when every trial goes as its
	// phases plan) counts as four searches beside those done: one
	// search that failed confirmations drew out to twice the others
	// (18 B's, the first, on a quiet host against the 10mbit model) no
	// longer sets what every later one takes. On that recording the
	// estimates within 35 % of the time left went from 74 % with the
	// searches done alone to 100 %.
	s.est.PriorUnits = 4
	sizes := slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(cfg.Sizes)))))
	s.planned = len(sizes) * cfg.Repeat
	err := s.run(ctx, sizes)
	res.Sizes = res.Sizes[:0]
	for _, size := range slices.Sorted(mapKeys(s.done)) {
		res.Sizes = append(res.Sizes, *s.done[size])
	}
	res.Seconds = cfg.now().Sub(s.start).Seconds()
	for _, sr := range res.Sizes {
		for _, w := range sr.Warnings {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%d B: %s", sr.Size, w))
		}
	}
	var advice string
	res.SenderPacing, advice = priority.RunReport(pacing, hostStalled(res.Sizes))
	if advice != "" {
		res.Warnings = append(res.Warnings, advice)
	}
	if ctx.Err() != nil {
		res.Interrupted = true
		w := "the sweep was interrupted: only the sizes shown were finished"
		if u := res.Unfinished; u != nil {
			n := fmt.Sprintf("%d trials it finished are", len(u.TrialLog))
			if len(u.TrialLog) == 1 {
				n = "1 trial it finished is"
			}
			w += fmt.Sprintf("; %d B's search was under way: the %s kept as unfinished (interrupted), not as a result", u.Size, n)
		}
		res.Warnings = append(res.Warnings, w)
		return nil
	}
	if err != nil {
		res.Error = err.Error()
	}
	return err
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sweeper is one sweep under way.
type sweeper struct {
	cfg           Config
	r             Runner
	res           *result.Sweep
	start         time.Time
	done          map[int]*result.SweepSize
	planned, fin  int
	trialsStarted bool
	silent        int // trials in a row without the far end's counts
	// The time-left estimate: the trial before (a re-run asks it again),
	// the sizes still to search and the bisections the cliffs may need.
	est         *eta.Estimator
	prev        Spec
	ran         bool
	stalled     bool  // this host spoiled the trial before (VerdictStall)
	untested    bool  // the search under way met a rate this host could not test
	rerun       bool  // the latest trial was a re-run this host caused (observe)
	ahead       []int // the planned sizes after the one under way (none once bisecting)
	bisectLeft  sides
	laterBisect sides     // of bisectLeft, the cliffs' after the one under way
	overload    overload  // what the size under way forwarded when it failed
	told        *Progress // a trial's progress, told once its verdict is weighed
	// The survey (see survey): each planned size's first trial, kept
	// until its search uses it, and what it showed; reused says the trial
	// just returned was one of them.
	first  map[Spec]result.SweepOutcome
	looked map[int]look
	reused bool
	// cut is the cliff being bisected, while its middle size is searched;
	// holdTell leaves the end of a size's last search to be told once the
	// size is judged.
	cut      *cut
	holdTell bool
	// lone says the sweeper runs one search (SearchTargets): no run to
	// learn a search's length from.
	lone bool
}

func (s *sweeper) run(ctx context.Context, sizes []int) error {
	if err := s.survey(ctx, sizes); err != nil || ctx.Err() != nil {
		if err == nil {
			err = ctx.Err()
		}
		return err
	}
	for i, size := range sizes {
		s.ahead = sizes[i+1:]
		if _, err := s.size(ctx, size, false); err != nil {
			return err
		}
		if !s.cfg.NoBisect {
			// The cliffs between the sizes done so far will be
			// bisected: the estimate counts them from now on.
			s.bisectLeft = s.bisections(findCliffs(s.sorted(), s.cfg.CliffDrop))
		}
	}
	s.ahead = nil
	cliffs := findCliffs(s.sorted(), s.cfg.CliffDrop)
	for i, c := range cliffs {
		s.bisectLeft, s.laterBisect = sides{}, sides{}
		if !s.cfg.NoBisect {
			s.bisectLeft, s.laterBisect = s.bisections(cliffs[i:]), s.bisections(cliffs[i+1:])
		}
		if !s.cfg.NoBisect {
			var err error
			if c, err = s.bisect(ctx, c); err != nil {
				return err
			}
		}
		c.Exact = c.Above == c.Below+1
		c.Hint = hint(c)
		s.res.Cliffs = append(s.res.Cliffs, c)
	}
	return nil
}

// sorted returns the finished sizes in ascending order.
func (s *sweeper) sorted() []*result.SweepSize {
	out := make([]*result.SweepSize, 0, len(s.done))
	for _, k := range slices.Sorted(mapKeys(s.done)) {
		out = append(out, s.done[k])
	}
	return out
}

// size runs the searches of one size (cfg.Repeat of them) and records it.
func (s *sweeper) size(ctx context.Context, size int, bisected bool) (*result.SweepSize, error) {
	sr := &result.SweepSize{Size: size, Bisected: bisected, TrialLog: []result.SweepTrial{}}
	if s.cfg.LinePPS != nil {
		sr.LinePPS = s.cfg.LinePPS(size)
	}
	// The last search's last trial is told last, on every way out: once
	// the size is judged, with the time left from what it found (whether
	// a bisection goes on, and where, is known then).
	defer s.tellMulti(size, s.cfg.Repeat, mlrsearch.State{})
	var found []search
	for rep := 1; rep <= s.cfg.Repeat; rep++ {
		s.holdTell = rep == s.cfg.Repeat
		f, err := s.searchOne(ctx, size, rep, sr, bisected)
		s.holdTell = false
		if ctx.Err() != nil {
			// Stopped (Ctrl-C): the trials that finished are kept,
			// marked, so that the time they took is not lost.
			if len(sr.TrialLog) > 0 {
				sr.Interrupted = true
				s.res.Unfinished = sr
			}
			return nil, ctx.Err()
		}
		if err != nil {
			s.res.Unfinished = sr
			return nil, err
		}
		found = append(found, f)
		s.fin++
		kinds := []string{unitSearch, searchKind(f.atMax)}
		if l, ok := s.looked[size]; ok && s.lookKind(l) != kinds[1] {
			kinds = append(kinds, s.lookKind(l))
		}
		s.est.Unit(kinds...)
	}
	summarise(sr, found)
	judge(sr, s.res.Test.Medium)
	s.done[size] = sr
	return sr, nil
}

// searchOne runs repetition rep of size's search: the multi-rate search
// (SearchTargets's, under the one criterion) for timed trials, sweep's own
// search for trials of a count of datagrams (--packets).
func (s *sweeper) searchOne(ctx context.Context, size, rep int, sr *result.SweepSize, bisected bool) (search, error) {
	if s.cfg.Packets > 0 {
		return s.search(ctx, size, rep, sr, bisected)
	}
	found, err := s.multi(ctx, size, rep, []float64{s.cfg.LossPercent}, []*result.SweepSize{sr}, bisected)
	if err != nil || len(found) == 0 {
		return search{}, err
	}
	return found[0], nil
}

// trial runs one trial, after the gap that lets queues drain.
func (s *sweeper) trial(ctx context.Context, spec Spec) (result.SweepOutcome, error) {
	if o, ok := s.reuse(spec); ok {
		return o, nil
	}
	if s.trialsStarted {
		if err := s.cfg.Sleep(ctx, s.cfg.Gap); err != nil {
			return result.SweepOutcome{}, err
		}
	}
	s.trialsStarted = true
	o, err := s.r.Trial(ctx, spec)
	if err != nil {
		return o, fmt.Errorf("trial of %d B at %.0f datagrams/s: %w", spec.Size, spec.RatePPS, err)
	}
	s.observe(spec)
	if s.silent = s.silent + 1; !o.NoReport {
		s.silent = 0
	}
	if s.silent >= s.cfg.MaxSilent && ctx.Err() == nil {
		return o, fmt.Errorf("the far end sent no counts back in %d trials in a row (the last at %d B, %.0f datagrams/s): is it running, and in the mode asked for?", s.silent, spec.Size, spec.RatePPS)
	}
	return o, nil
}
