package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/pacer"
	"github.com/wirebench/wirebench/internal/result"
)

// Kind is the "kind" of a sweep's JSON document.
const Kind = "sweep"

// Spec is one trial to run: datagrams of Size payload bytes at RatePPS,
// for Duration or, when Packets > 0, for that many datagrams.
type Spec struct {
	Size     int
	RatePPS  float64
	Duration time.Duration
	Packets  int64
}

// Outcome is what a runner measured in one trial.
type Outcome struct {
	// Sent is the datagrams we sent, SendErrors those the socket refused.
	Sent       int64 `json:"sent"`
	SendErrors int64 `json:"send_errors,omitempty"`
	// OfferedPPS is the rate we really offered.
	OfferedPPS float64 `json:"offered_pps"`
	// Received and Lost are the far end's counts (or, for a reflector,
	// what came back and what did not); Total is what the far end
	// expected (Received + Lost), the base of the loss percentage.
	Received int64 `json:"received"`
	Lost     int64 `json:"lost"`
	Total    int64 `json:"total"`
	// Unreported is what we sent that the far end's counts do not cover
	// (Sent − Total when positive): an iperf server counts up to the
	// highest id it saw, so datagrams lost at the end of a test are in no
	// count of its report. They count as lost here.
	Unreported int64 `json:"unreported,omitempty"`
	// MaxLagS is the furthest our sender fell behind its schedule, in
	// seconds (it then caught up in a burst); 0 when unknown.
	MaxLagS float64 `json:"max_lag_s,omitempty"`
	// SendSeconds and ReceiveSeconds are the two windows: first to last
	// datagram sent, and as the far end received them. 0 = unknown.
	SendSeconds    float64 `json:"send_s"`
	ReceiveSeconds float64 `json:"receive_s,omitempty"`
	// BacklogS is how far the far end fell behind our pace over the
	// trial, in seconds: a queue that filled (and would drop in a longer
	// trial). Runners measure it as the rise of the round-trip time from
	// the start of the trial to its end (reflector), or as the receive
	// window's excess over the send window (server report). BacklogKnown
	// says whether it was measured.
	BacklogS     float64 `json:"backlog_s"`
	BacklogKnown bool    `json:"-"`
	// ServicePPS is, for a reflector, the rate the far end delivered at
	// while it held a queue (the spacing of what came back that had
	// waited); 0 when it held none long enough to time. The backlog is
	// then the queue a far end of that rate builds at our offered rate.
	ServicePPS float64 `json:"service_pps,omitempty"`
	// RTT is the round-trip time where the far end reflects.
	RTT *RTT `json:"rtt_ms,omitempty"`
	// RTTs are the round-trip times of every datagram that came back,
	// in arrival order, where the far end reflects (not in the JSON:
	// RTT summarises them).
	RTTs []time.Duration `json:"-"`
	// Transit is the far end's summary of one-way transit times (a
	// wirebench server's report), clock offset included; nil when it sent
	// none.
	Transit *result.Transit `json:"transit_us,omitempty"`
	// HostDrops counts datagrams our own host dropped (receive buffer
	// overflow of a reflect run's socket): not the device's loss.
	HostDrops int64 `json:"host_drops,omitempty"`
	// NoReport says the far end's counts never came (no server report, or
	// nothing came back from a reflector): Received and Lost are then 0
	// and the trial counts as all lost.
	NoReport bool `json:"no_report,omitempty"`
	// CountedBy says whose counts Received and Lost are: CountedByPeer
	// (the far end's report to our client) or CountedByDevice (the
	// device's own report, read from its shell, when the dialect brings
	// no report back); "" when neither came or the far end reflects.
	CountedBy string `json:"counted_by,omitempty"`
	// Device is the device's own figures for the trial (--dut), absent
	// fields omitted; its transcript is left out here (it is the whole
	// session's, in Result.Device).
	Device *result.Device `json:"device,omitempty"`
	// Warnings are the runner's: why a figure may not be trusted.
	Warnings []string `json:"warnings,omitempty"`
}

// Who counted a trial's received and lost datagrams (Outcome.CountedBy).
const (
	CountedByPeer   = "peer_report" // the far end's report to our client
	CountedByDevice = "device"      // the device's own report, from its shell
)

// RTT summarises round-trip times in milliseconds.
type RTT struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Runner runs one trial. It returns an error only when the trial could not
// be made (the far end is unreachable, a socket failed); a trial that ran
// returns its Outcome however bad the figures.
type Runner interface {
	Trial(ctx context.Context, s Spec) (Outcome, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, s Spec) (Outcome, error)

// Trial calls f.
func (f RunnerFunc) Trial(ctx context.Context, s Spec) (Outcome, error) { return f(ctx, s) }

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
	// lasts (RFC 2544 uses 60 s): the rate is reported only when that
	// trial passes too. 0 confirms with one more trial of the search's
	// own length; a Confirm shorter than Trial is Trial. With Packets the
	// confirming trial sends enough datagrams to last Confirm at the rate.
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
	// Prior holds, per size, trials already run by a search under another
	// loss criterion (RFC 2544's NDR before its PDR): the search judges
	// them again against its own criterion, starts from what they show
	// and does not run them again (they appear in the trial log marked
	// reused). A reused confirming trial at the rate the search settles
	// on confirms it, when it is as long as this search's confirmation.
	Prior map[int][]TrialRecord
	// OnTrial, when set, is called after every trial (for progress).
	OnTrial func(p Progress)
	// Sleep waits between trials; nil uses a timer (tests pass a fake).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Progress is where a sweep is, for a progress line.
type Progress struct {
	Size     int
	Repeat   int // 1-based repetition
	Trial    int // 1-based trial of this search
	RatePPS  float64
	Outcome  Outcome
	Verdict  string // VerdictPass, VerdictLoss, VerdictPace, VerdictHost or VerdictStall
	Done     int    // searches finished
	Planned  int    // searches planned so far (grows when a cliff is bisected)
	Elapsed  time.Duration
	Bisected bool // the size was added by cliff bisection
}

// ETA estimates the time left from the searches done so far.
func (p Progress) ETA() time.Duration {
	if p.Done == 0 || p.Planned <= p.Done {
		return 0
	}
	return time.Duration(float64(p.Elapsed) / float64(p.Done) * float64(p.Planned-p.Done))
}

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

// TrialRecord is one trial of a search, as it appears in the JSON.
type TrialRecord struct {
	Repeat  int     `json:"repeat"`
	RatePPS float64 `json:"rate_pps"`
	Confirm bool    `json:"confirm,omitempty"`
	// TrialS and TrialPackets are the length the trial was asked for:
	// seconds, or datagrams (with --packets).
	TrialS       float64 `json:"trial_s,omitempty"`
	TrialPackets int64   `json:"trial_packets,omitempty"`
	Verdict      string  `json:"verdict"`
	// Reused marks a trial of an earlier search (Config.Prior) judged
	// again under this search's criterion, not run again.
	Reused bool `json:"reused,omitempty"`
	// DeliveredPPS is the rate the far end delivered: its count over its
	// own receive window (see delivered).
	DeliveredPPS float64 `json:"delivered_pps"`
	Outcome
}

// Repeats are a size's repetitions, with a 95 % confidence interval of the
// mean rate (Student's t).
type Repeats struct {
	N        int       `json:"n"`
	RatesPPS []float64 `json:"rates_pps"`
	MeanPPS  float64   `json:"mean_pps"`
	// CILowPPS and CIHighPPS bound the 95 % confidence interval;
	// CIPercent is its half-width as a share of the mean, in percent.
	CILowPPS  float64 `json:"ci95_low_pps"`
	CIHighPPS float64 `json:"ci95_high_pps"`
	CIPercent float64 `json:"ci95_percent"`
	// Unstable marks a spread too wide to trust (CIPercent above
	// UnstableCIPercent, or repetitions that disagree on limited_by_host).
	Unstable bool `json:"unstable"`
}

// UnstableCIPercent is the half-width of the 95 % interval, as a share of
// the mean, above which a size's repetitions are too spread to trust.
const UnstableCIPercent = 5.0

// SizeResult is one size's result.
type SizeResult struct {
	Size int `json:"size"`
	// Sent is the datagrams sent in the trial that confirmed the rate.
	Sent int64 `json:"sent"`
	// RatePPS is what the far end delivered in the trial that confirmed
	// the highest passing rate: its count over its own receive window
	// (the mean over repetitions); RateBPS the same in payload bit/s.
	// TriedPPS is the rate that trial offered (asked of our sender).
	// When no rate passed (Found false) both are absent from the JSON:
	// the rate lies below the lowest tried, and no passing trial
	// delivers 0, so omitempty leaves out exactly the unknown ones.
	RatePPS  float64 `json:"rate_pps,omitempty"`
	RateBPS  float64 `json:"rate_bps,omitempty"`
	TriedPPS float64 `json:"tried_pps"`
	// Found says a rate passed at all (text prints "none" when not).
	Found bool `json:"found"`
	// HeldS is the length of the trial the rate held for: the confirming
	// trial's (Config.Confirm), or a search trial's when no confirmation
	// passed (the shortest over repetitions).
	HeldS float64 `json:"held_s"`
	// LossPercent is the loss of the confirming trial; null when there
	// is none (no rate passed: nothing was confirmed).
	LossPercent *float64 `json:"loss_percent"`
	// Trials is how many trials the searches of this size took.
	Trials int `json:"trials"`
	// PercentOfLine is RatePPS as a share of the medium's maximum packet
	// rate (the size sweep's column); null when no medium is known.
	PercentOfLine *float64 `json:"percent_of_line"`
	LinePPS       float64  `json:"line_pps,omitempty"`
	// LimitedByHost says this host could not send fast enough to find the
	// device's limit: RatePPS is a lower bound, not the device's figure.
	LimitedByHost bool `json:"limited_by_host"`
	// Confirmed is false when no confirming trial passed within the trial
	// budget (the rate is then the best seen, and a warning says so).
	Confirmed bool `json:"confirmed"`
	// Status is "ok", or "suspect" when RatePPS is more than 0.1 % above
	// the medium's packet rate (PercentOfLine over 100.1): Reason says why.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// AtMax says the rate is the highest the search was allowed to try.
	AtMax bool `json:"at_max,omitempty"`
	// RTT is the confirming trial's round-trip time, where the far end
	// reflects.
	RTT *RTT `json:"rtt_ms,omitempty"`
	// CountedBy and Device are the confirming trial's (see Outcome): who
	// counted the loss it was judged on, and the device's own figures
	// (--dut).
	CountedBy string         `json:"counted_by,omitempty"`
	Device    *result.Device `json:"device,omitempty"`
	// Bisected marks a size added by cliff bisection.
	Bisected bool `json:"bisected,omitempty"`
	// Interrupted marks the size under way when the sweep was stopped
	// (Result.Unfinished): its trials are kept, its search did not end.
	Interrupted bool     `json:"interrupted,omitempty"`
	Repeats     *Repeats `json:"repeats,omitempty"`
	// TrialLog is every trial of this size.
	TrialLog []TrialRecord `json:"trial_log"`
	Warnings []string      `json:"warnings,omitempty"`
}

// Cliff is a fall of the byte rate between two sizes.
type Cliff struct {
	// Below is the last size before the fall, Above the first after it;
	// Above = Below + 1 when the sizes were bisected to the byte.
	Below        int     `json:"below"`
	Above        int     `json:"above"`
	RateBelowPPS float64 `json:"rate_below_pps"`
	RateAbovePPS float64 `json:"rate_above_pps"`
	// Exact says Above = Below + 1.
	Exact bool   `json:"exact"`
	Hint  string `json:"hint"`
}

// Result is a sweep's document (schema wirebench/1, kind "sweep").
type Result struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	// RunID is the id the results store saved this run as, in the
	// printed document only (left out when the run was not saved).
	RunID     int64        `json:"run_id,omitempty"`
	StartedAt time.Time    `json:"started_at"`
	Test      Test         `json:"test"`
	Sizes     []SizeResult `json:"sizes"`
	Cliffs    []Cliff      `json:"cliffs"`
	Seconds   float64      `json:"duration_s"`
	Warnings  []string     `json:"warnings"`
	// Interrupted says the sweep was stopped (Ctrl-C) before it finished:
	// the sizes above are those finished until then.
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
	// Unfinished is the size whose search an error or an interrupt ended,
	// with the trials it ran (marked Interrupted when the sweep was
	// stopped): evidence, not a result (absent when every size finished,
	// or when the size under way had no finished trial).
	Unfinished *SizeResult `json:"unfinished,omitempty"`
	// Device is the session with the device's shell (--dut): which shell,
	// and the transcript of every trial's commands and reports.
	Device *DeviceSession `json:"device,omitempty"`
}

// DeviceSession is the record of a sweep's session with the device's
// shell.
type DeviceSession struct {
	// Spec is the --dut line (serial:, telnet:, cmd:), Shell the adapter.
	Spec  string `json:"spec"`
	Shell string `json:"shell,omitempty"`
	// Error says why the session failed, when it did.
	Error string `json:"error,omitempty"`
	// Transcript is the whole session, both directions, timestamped.
	Transcript []string `json:"transcript"`
}

// Test describes what was asked, for the document.
type Test struct {
	Mode        string  `json:"mode"`
	Host        string  `json:"host"`
	Port        int     `json:"port"`
	Medium      string  `json:"medium,omitempty"`
	LossPercent float64 `json:"loss_percent"`
	TrialS      float64 `json:"trial_s,omitempty"`
	Packets     int64   `json:"packets,omitempty"`
	// ConfirmS is Config.Confirm in seconds (0: the confirming trial is
	// as long as the others).
	ConfirmS float64 `json:"confirm_s"`
	MaxRate  string  `json:"max_rate,omitempty"`
	Repeat   int     `json:"repeat"`
	Bisect   bool    `json:"bisect"`
	Sizes    []int   `json:"sizes"`
	// Dialect is our client's dialect where it is not the default
	// (a device's server may need iperf2-legacy).
	Dialect string `json:"dialect,omitempty"`
	// DialectChosenBy says how the dialect was chosen ("flag", "port",
	// "probe", "fallback"); DialectReason what the probe saw.
	DialectChosenBy string `json:"dialect_chosen_by,omitempty"`
	DialectReason   string `json:"dialect_reason,omitempty"`
	// DUT is the --dut line when the device's own shell started its
	// server for every trial.
	DUT string `json:"dut,omitempty"`
}

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
func NewResult(test Test) *Result {
	return &Result{Schema: result.Schema, Kind: Kind, StartedAt: time.Now().UTC(), Test: test,
		Sizes: []SizeResult{}, Cliffs: []Cliff{}, Warnings: []string{}}
}

// Run sweeps cfg.Sizes with r into res (made by NewResult). When ctx ends
// it stops after the trial under way, marks res interrupted and returns
// what was finished; other errors (a trial that could not be made) end
// the sweep with res holding the sizes done and Error set.
func Run(ctx context.Context, cfg Config, r Runner, res *Result) error {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	s := &sweeper{cfg: cfg, r: r, res: res, start: time.Now(), done: map[int]*SizeResult{}}
	sizes := slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(cfg.Sizes)))))
	s.planned = len(sizes) * cfg.Repeat
	err := s.run(ctx, sizes)
	res.Sizes = res.Sizes[:0]
	for _, size := range slices.Sorted(mapKeys(s.done)) {
		res.Sizes = append(res.Sizes, *s.done[size])
	}
	res.Seconds = time.Since(s.start).Seconds()
	for _, sr := range res.Sizes {
		for _, w := range sr.Warnings {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%d B: %s", sr.Size, w))
		}
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
	res           *Result
	start         time.Time
	done          map[int]*SizeResult
	planned, fin  int
	trialsStarted bool
	silent        int // trials in a row without the far end's counts
}

func (s *sweeper) run(ctx context.Context, sizes []int) error {
	for _, size := range sizes {
		if _, err := s.size(ctx, size, false); err != nil {
			return err
		}
	}
	cliffs := findCliffs(s.sorted(), s.cfg.CliffDrop)
	for _, c := range cliffs {
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
func (s *sweeper) sorted() []*SizeResult {
	out := make([]*SizeResult, 0, len(s.done))
	for _, k := range slices.Sorted(mapKeys(s.done)) {
		out = append(out, s.done[k])
	}
	return out
}

// size runs the searches of one size (cfg.Repeat of them) and records it.
func (s *sweeper) size(ctx context.Context, size int, bisected bool) (*SizeResult, error) {
	sr := &SizeResult{Size: size, Bisected: bisected, TrialLog: []TrialRecord{}}
	if s.cfg.LinePPS != nil {
		sr.LinePPS = s.cfg.LinePPS(size)
	}
	var found []search
	for rep := 1; rep <= s.cfg.Repeat; rep++ {
		f, err := s.search(ctx, size, rep, sr, bisected)
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
	}
	summarise(sr, found)
	sr.judge(s.res.Test.Medium)
	s.done[size] = sr
	return sr, nil
}

// trial runs one trial, after the gap that lets queues drain.
func (s *sweeper) trial(ctx context.Context, spec Spec) (Outcome, error) {
	if s.trialsStarted {
		if err := s.cfg.Sleep(ctx, s.cfg.Gap); err != nil {
			return Outcome{}, err
		}
	}
	s.trialsStarted = true
	o, err := s.r.Trial(ctx, spec)
	if err != nil {
		return o, fmt.Errorf("trial of %d B at %.0f datagrams/s: %w", spec.Size, spec.RatePPS, err)
	}
	if s.silent = s.silent + 1; !o.NoReport {
		s.silent = 0
	}
	if s.silent >= s.cfg.MaxSilent && ctx.Err() == nil {
		return o, fmt.Errorf("the far end sent no counts back in %d trials in a row (the last at %d B, %.0f datagrams/s): is it running, and in the mode asked for?", s.silent, spec.Size, spec.RatePPS)
	}
	return o, nil
}
