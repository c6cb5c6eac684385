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

// Tests lists the tests in the order they run.
var Tests = []string{result.RFC2544TestThroughput, result.RFC2544TestLatency, result.RFC2544TestLoss, result.RFC2544TestBackToBack}

// latencyNotes say what the transit kinds measure, for LatencyNote.
var latencyNotes = map[string]string{
	result.RFC2544OneWay: "one-way latency: the wirebench server's receive time (kernel timestamp) minus our send stamp, " +
		"the two ends on one clock; the server summarises each trial (min, p50, p90, p99, p99.9, max) and keeps no " +
		"per-datagram times, so there is no mean and no histogram",
	result.RFC2544DelayVariation: "delay variation only, not latency: the server's clock is not known to be ours, so each " +
		"trial's minimum transit is subtracted (min reads 0) and the figures are how much later than the fastest " +
		"datagram the others arrived; give --same-clock when both ends read one clock (a lab on this host) for one-way " +
		"latency; the server keeps no per-datagram times, so there is no mean and no histogram",
}

// DefaultSchedule is the short-then-long schedule: 1 s search trials whose
// result is confirmed by a 5 s trial (the search's 1 % resolution holds at
// any length: a rate 1 % too high fills the backlog rule's 0.5 % of a trial
// in half of it); 1 s latency trials at the lower
// loads, the point at 100 % of the NDR being the NDR's confirming trial
// (RFC 2544 §26.2 times the throughput rate); 1 s loss steps, the one at
// the medium's maximum rate being the search's first trial; one
// back-to-back search.
func DefaultSchedule() result.RFC2544Schedule {
	return result.RFC2544Schedule{Search: time.Second, Confirm: 5 * time.Second, Latency: time.Second, LatencyRepeats: 1,
		LatencyFromConfirm: true, Loss: time.Second, BurstRepeats: 1, MaxBurst: 100000}
}

// StrictSchedule is RFC 2544's: 60 s throughput and loss trials (§26.1,
// §26.3), latency trials of 120 s repeated 20 times (§26.2), and the
// back-to-back search repeated 50 times (§26.4).
func StrictSchedule() result.RFC2544Schedule {
	return result.RFC2544Schedule{Search: time.Minute, Confirm: time.Minute, Latency: 2 * time.Minute, LatencyRepeats: 20,
		Loss: time.Minute, BurstRepeats: 50, MaxBurst: 100000}
}

func stamp(s *result.RFC2544Schedule) {
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
	Schedule result.RFC2544Schedule
	// Latency says what the far end's timing gives: result.RFC2544RoundTrip
	// (every datagram's round trip, result.SweepOutcome.RTTs), result.RFC2544OneWay or
	// result.RFC2544DelayVariation (a wirebench server's transit summary,
	// result.SweepOutcome.Transit), or "" when it gives none, with NoLatency
	// saying why.
	Latency   string
	NoLatency string
	// BacklogFloor is passed to the throughput search (see sweep.Config).
	BacklogFloor time.Duration
	// Gap separates trials so that queues drain (default 200 ms; the
	// options give sweep.DefaultGap of the mode).
	Gap time.Duration
	// OnProgress, when set, is called after every trial.
	OnProgress func(Progress)
	// Sleep waits between trials; nil uses a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the monotonic clock for the progress's times; nil uses
	// time.Now.
	Now func() time.Time
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
	stamp(&c.Schedule)
	if c.Gap <= 0 {
		c.Gap = 200 * time.Millisecond
	}
	if c.Sleep == nil {
		c.Sleep = func(ctx context.Context, d time.Duration) error { return pacer.SystemClock{}.Sleep(ctx, d) }
	}
	if c.has(result.RFC2544TestLatency) && !c.has(result.RFC2544TestThroughput) {
		c.Tests = append(c.Tests, result.RFC2544TestThroughput)
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
	case "", result.RFC2544RoundTrip, result.RFC2544OneWay, result.RFC2544DelayVariation:
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

// NewResult returns an empty document for test.
func NewResult(test result.RFC2544Test) *result.RFC2544 {
	return &result.RFC2544{Schema: result.Schema, Kind: result.KindRFC2544, StartedAt: time.Now().UTC(), Test: test, Sizes: []result.RFC2544Size{}, Warnings: []string{}}
}
