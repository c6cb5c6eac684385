package rfc2544

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/pacer"
	"github.com/wirebench/wirebench/internal/result"
)

// Kind is the "kind" of an RFC 2544 run's JSON document.
const Kind = "rfc2544"

// The tests, as named in --tests and the JSON.
const (
	TestThroughput = "throughput"
	TestLatency    = "latency"
	TestLoss       = "loss"
	TestBackToBack = "backtoback"
)

// Tests lists the tests in the order they run.
var Tests = []string{TestThroughput, TestLatency, TestLoss, TestBackToBack}

// Latency kinds (LatencyPoint.Kind).
const (
	LatencyRoundTrip = "round_trip" // reflector: out and back
	// LatencyOneWay is a wirebench server's transit times (its receive
	// time minus our send stamp) when both ends read the same clock.
	LatencyOneWay = "one_way"
	// LatencyDelayVariation is the same on clocks that may differ: each
	// trial's minimum is subtracted, so the figures are the delay above
	// the fastest datagram's, not a delay.
	LatencyDelayVariation = "delay_variation"
)

// latencyNotes say what the transit kinds measure, for LatencyNote.
var latencyNotes = map[string]string{
	LatencyOneWay: "one-way latency: the wirebench server's receive time (kernel timestamp) minus our send stamp, " +
		"the two ends on one clock; the server summarises each trial (min, p50, p90, p99, p99.9, max) and keeps no " +
		"per-datagram times, so there is no mean and no histogram",
	LatencyDelayVariation: "delay variation only, not latency: the server's clock is not known to be ours, so each " +
		"trial's minimum transit is subtracted (min reads 0) and the figures are how much later than the fastest " +
		"datagram the others arrived; give --same-clock when both ends read one clock (a lab on this host) for one-way " +
		"latency; the server keeps no per-datagram times, so there is no mean and no histogram",
}

// Schedule is how long each kind of trial lasts.
type Schedule struct {
	// Search and Confirm are the throughput search's trials and the
	// trial that confirms its result (the long, final one).
	Search  time.Duration `json:"-"`
	Confirm time.Duration `json:"-"`
	// Latency is one latency trial; LatencyRepeats how many are run per
	// load (their figures averaged).
	Latency        time.Duration `json:"-"`
	LatencyRepeats int           `json:"latency_repeats"`
	// Loss is one step of the frame loss test.
	Loss time.Duration `json:"-"`
	// BurstRepeats is how many back-to-back searches run per size (their
	// lengths averaged); MaxBurst caps a burst's length in frames.
	BurstRepeats int   `json:"burst_repeats"`
	MaxBurst     int64 `json:"max_burst_frames"`
	// The same lengths in seconds, for the document.
	SearchS  float64 `json:"search_trial_s"`
	ConfirmS float64 `json:"confirm_trial_s"`
	LatencyS float64 `json:"latency_trial_s"`
	LossS    float64 `json:"loss_trial_s"`
}

// DefaultSchedule is the short-then-long schedule: 1 s search trials whose
// result is confirmed by a 10 s trial, 5 s latency trials, 2 s loss steps,
// one back-to-back search.
func DefaultSchedule() Schedule {
	return Schedule{Search: time.Second, Confirm: 10 * time.Second, Latency: 5 * time.Second, LatencyRepeats: 1,
		Loss: 2 * time.Second, BurstRepeats: 1, MaxBurst: 100000}
}

// StrictSchedule is RFC 2544's: 60 s throughput and loss trials (§26.1,
// §26.3), latency trials of 120 s repeated 20 times (§26.2), and the
// back-to-back search repeated 50 times (§26.4).
func StrictSchedule() Schedule {
	return Schedule{Search: time.Minute, Confirm: time.Minute, Latency: 2 * time.Minute, LatencyRepeats: 20,
		Loss: time.Minute, BurstRepeats: 50, MaxBurst: 100000}
}

func (s *Schedule) stamp() {
	s.SearchS, s.ConfirmS, s.LatencyS, s.LossS = s.Search.Seconds(), s.Confirm.Seconds(), s.Latency.Seconds(), s.Loss.Seconds()
}

// Config is what an RFC 2544 run does.
type Config struct {
	// Sizes are the UDP payload sizes (searched ascending).
	Sizes []int
	// Tests are the tests to run (see Tests); latency needs throughput's
	// NDR and adds it.
	Tests []string
	// LinePPS is the medium's maximum packet rate for a size. Required.
	LinePPS func(size int) float64
	// PDRPercent is the loss the partial drop rate allows (default 0.5).
	PDRPercent float64
	// Loads are the latency test's shares of the NDR, in percent
	// (default 10, 50, 90, 100).
	Loads []float64
	// Schedule is the trials' lengths (zero: DefaultSchedule).
	Schedule Schedule
	// Latency says what the far end's timing gives: LatencyRoundTrip
	// (every datagram's round trip, result.SweepOutcome.RTTs), LatencyOneWay or
	// LatencyDelayVariation (a wirebench server's transit summary,
	// result.SweepOutcome.Transit), or "" when it gives none, with NoLatency
	// saying why.
	Latency   string
	NoLatency string
	// LatencyMinSize is, for the transit kinds, the smallest size whose
	// datagrams the far end can send its summary back to; smaller sizes
	// get no latency points and a note saying why (0: no limit).
	LatencyMinSize int
	// BacklogFloor is passed to the throughput search (see sweep.Config).
	BacklogFloor time.Duration
	// Gap separates trials so that queues drain (default 200 ms).
	Gap time.Duration
	// OnProgress, when set, is called after every trial.
	OnProgress func(Progress)
	// Sleep waits between trials; nil uses a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (c *Config) defaults() {
	if c.PDRPercent == 0 {
		c.PDRPercent = 0.5
	}
	if len(c.Loads) == 0 {
		c.Loads = []float64{10, 50, 90, 100}
	}
	if c.Schedule.Search == 0 {
		c.Schedule = DefaultSchedule()
	}
	c.Schedule.stamp()
	if c.Gap <= 0 {
		c.Gap = 200 * time.Millisecond
	}
	if c.Sleep == nil {
		c.Sleep = func(ctx context.Context, d time.Duration) error { return pacer.SystemClock{}.Sleep(ctx, d) }
	}
	if c.has(TestLatency) && !c.has(TestThroughput) {
		c.Tests = append(c.Tests, TestThroughput)
	}
	slices.SortFunc(c.Tests, func(a, b string) int { return slices.Index(Tests, a) - slices.Index(Tests, b) })
	c.Tests = slices.Compact(c.Tests)
}

func (c *Config) has(test string) bool { return slices.Contains(c.Tests, test) }

// Validate checks a configuration.
func (c *Config) Validate() error {
	if len(c.Sizes) == 0 {
		return errors.New("rfc2544: no sizes")
	}
	for _, s := range c.Sizes {
		if s < 16 || s > 65507 {
			return fmt.Errorf("rfc2544: size %d: want 16 to 65507 bytes of UDP payload", s)
		}
	}
	if len(c.Tests) == 0 {
		return errors.New("rfc2544: no tests")
	}
	for _, t := range c.Tests {
		if !slices.Contains(Tests, t) {
			return fmt.Errorf("rfc2544: unknown test %q: want %s", t, strings.Join(Tests, ", "))
		}
	}
	if c.LinePPS == nil {
		return errors.New("rfc2544: no medium rate")
	}
	for _, s := range c.Sizes {
		if !(c.LinePPS(s) > 0) {
			return fmt.Errorf("rfc2544: the medium has no packet rate for %d B", s)
		}
	}
	if c.PDRPercent < 0 || c.PDRPercent >= 100 {
		return fmt.Errorf("rfc2544: partial drop rate criterion %v %%: want 0 to below 100", c.PDRPercent)
	}
	switch c.Latency {
	case "", LatencyRoundTrip, LatencyOneWay, LatencyDelayVariation:
	default:
		return fmt.Errorf("rfc2544: unknown latency kind %q", c.Latency)
	}
	for _, l := range c.Loads {
		if !(l > 0 && l <= 100) {
			return fmt.Errorf("rfc2544: latency load %v %%: want above 0 up to 100", l)
		}
	}
	return nil
}

// Test describes what was asked, for the document.
type Test struct {
	Mode       string    `json:"mode"`
	Host       string    `json:"host"`
	Port       int       `json:"port"`
	Medium     string    `json:"medium"`
	Sizes      []int     `json:"sizes"`
	Tests      []string  `json:"tests"`
	PDRPercent float64   `json:"pdr_percent"`
	Loads      []float64 `json:"latency_loads_percent"`
	Strict     bool      `json:"strict"`
	Schedule   Schedule  `json:"schedule"`
	// Clock says, for a wirebench server, whether it reads our clock
	// (ClockShared: its transit times are one-way latency) or may not
	// (ClockSeparate: delay variation only), and ClockWhy how that was
	// decided; empty for the other modes.
	Clock    string `json:"clock,omitempty"`
	ClockWhy string `json:"clock_why,omitempty"`
}

// Test.Clock values.
const (
	ClockShared   = "shared"
	ClockSeparate = "separate"
)

// Result is an RFC 2544 run's document.
type Result struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	// RunID is the id the results store saved this run as, in the
	// printed document only (left out when the run was not saved).
	RunID     int64        `json:"run_id,omitempty"`
	StartedAt time.Time    `json:"started_at"`
	Seconds   float64      `json:"seconds"`
	Test      Test         `json:"test"`
	Sizes     []SizeResult `json:"sizes"`
	// Interrupted says the run was stopped (Ctrl-C): what finished is
	// kept; a test cut short is absent from its size.
	Interrupted bool     `json:"interrupted"`
	Error       string   `json:"error,omitempty"`
	Warnings    []string `json:"warnings"`
}

// SizeResult is one size's results; a test not run (or not finished) has
// its fields zero and its detail absent.
type SizeResult struct {
	Size int `json:"size"`
	// LinePPS is the medium's maximum packet rate for the size.
	LinePPS float64 `json:"line_pps"`
	// NDRPPS and PDRPPS are the no-drop and partial-drop rates (what the
	// far end delivered, datagrams/s); NDRBPS and PDRBPS the same in UDP
	// payload bit/s. A rate that was not found is absent from the JSON
	// (no rate tried passed: it lies below the lowest tried, which is not
	// 0), and no passing trial ever delivers 0, so omitempty leaves out
	// exactly the unknown ones.
	NDRPPS float64 `json:"ndr_pps,omitempty"`
	PDRPPS float64 `json:"pdr_pps,omitempty"`
	NDRBPS float64 `json:"ndr_bps,omitempty"`
	PDRBPS float64 `json:"pdr_bps,omitempty"`
	// NDRFound and PDRFound say whether a rate passed at all (text, CSV
	// and the HTML report print "none" or leave the value empty when not).
	NDRFound bool `json:"ndr_found"`
	PDRFound bool `json:"pdr_found"`
	// NDR and PDR are the searches, with every trial.
	NDR *result.SweepSize `json:"ndr,omitempty"`
	PDR *result.SweepSize `json:"pdr,omitempty"`
	// Latency are the latency test's points; LatencyNote says why there
	// are none, or what they measure when it is not a round trip.
	Latency     []LatencyPoint `json:"latency"`
	LatencyNote string         `json:"latency_note,omitempty"`
	// LossCurve is the frame loss test's steps.
	LossCurve []LossPoint `json:"loss_curve"`
	// BackToBackFrames is the longest burst at line rate carried without
	// loss (the mean over the searches), BackToBackUS its line time in
	// microseconds; BackToBack the searches.
	BackToBackFrames float64     `json:"back_to_back_frames"`
	BackToBackUS     float64     `json:"back_to_back_us"`
	BackToBack       *BackToBack `json:"back_to_back,omitempty"`
	// Done lists the tests this size finished.
	Done     []string `json:"done"`
	Warnings []string `json:"warnings"`
}

// LatencyPoint is the latency at one load.
type LatencyPoint struct {
	LoadPercent float64 `json:"load_percent"`
	// RatePPS is the rate asked for, OfferedPPS what this host sent.
	RatePPS    float64 `json:"rate_pps"`
	OfferedPPS float64 `json:"offered_pps"`
	Kind       string  `json:"kind"`
	// Repeats is how many trials were averaged (RFC 2544: 20).
	Repeats int   `json:"repeats"`
	Sent    int64 `json:"sent"`
	Lost    int64 `json:"lost"`
	// The statistics in milliseconds: of the one trial, or the average of
	// the repeats' (each from its own histogram).
	// MeanMS is absent for the transit kinds: the server's summary has
	// no mean.
	MinMS  float64 `json:"min_ms"`
	MeanMS float64 `json:"mean_ms,omitempty"`
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p99_9_ms"`
	MaxMS  float64 `json:"max_ms"`
	// Timed is how many datagrams the figures cover (all repeats).
	Timed int64 `json:"timed"`
	// Histogram is every datagram of every repeat, in coarse bins (empty
	// for the transit kinds: the server sends a summary only).
	Histogram []result.RTTBin `json:"histogram"`
	// HostLimited says this host did not offer the rate asked for.
	HostLimited bool `json:"host_limited,omitempty"`
}

// LossPoint is one step of the frame loss test.
type LossPoint struct {
	// OfferedPercent is the step, a share of the medium's maximum rate;
	// RatePPS the rate asked for; OfferedPPS what this host really sent.
	OfferedPercent float64 `json:"offered_percent"`
	RatePPS        float64 `json:"rate_pps"`
	OfferedPPS     float64 `json:"offered_pps"`
	Sent           int64   `json:"sent"`
	Lost           int64   `json:"lost"`
	LossPercent    float64 `json:"loss_percent"`
	// SendS is the time from the first datagram sent to the last;
	// SenderLagMS the furthest this host fell behind its schedule (a
	// stall longer than the far end's queue lets its link idle, and it
	// then loses more than its rate accounts for).
	SendS       float64 `json:"send_s"`
	SenderLagMS float64 `json:"sender_lag_ms"`
	// HostLimited says this host sent less than 99 % of the rate asked.
	HostLimited bool `json:"host_limited,omitempty"`
}

// NewResult returns an empty document for test.
func NewResult(test Test) *Result {
	return &Result{Schema: result.Schema, Kind: Kind, StartedAt: time.Now().UTC(), Test: test, Sizes: []SizeResult{}, Warnings: []string{}}
}
