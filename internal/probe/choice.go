package probe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3"
)

// DialectAuto is the --dialect value that probes the peer first.
const DialectAuto = "auto"

// How a test's dialect was chosen (dialect_chosen_by in JSON).
const (
	ChosenByFlag     = "flag"     // --dialect NAME
	ChosenByPort     = "port"     // no --dialect, iperf's port: 5001 iperf2, 5201 iperf3
	ChosenByProbe    = "probe"    // the peer's answer to the probe's opening
	ChosenByFallback = "fallback" // the probe could not tell: iperf2
	ChosenByDevice   = "device"   // --dut: the device's server needs it
)

// DialectChoice is the dialect a command runs in and why.
type DialectChoice struct {
	Dialect string
	By      string // ChosenBy* values
	Reason  string
	// Answered is set when the probe saw the peer answer: a test that
	// follows it and is refused, or told busy, is tried again (an iperf3
	// server reopens its listener after each test).
	Answered bool
}

// PortDialects maps the ports whose number says the dialect to that
// dialect: with no --dialect, a test to such a port runs in it at once,
// with no probe, as `iperf -c` and `iperf3 -c` would.
type PortDialects map[int]string

// DefaultPorts are iperf 2's port (5001: iperf2) and iperf3's (5201:
// iperf3).
func DefaultPorts() PortDialects {
	return PortDialects{session.DefaultPort: session.DialectIperf2, session.DefaultIperf3Port: session.DialectIperf3}
}

// WillProbe says ChooseDialect probes the peer for a --dialect value (given: the
// flag was set) and port: with --dialect auto, or with no --dialect on a
// port that is neither iperf's nor iperf3's.
func WillProbe(port int, value string, given bool) bool {
	return DefaultPorts().WillProbe(port, value, given)
}

// WillProbe says Choose probes the peer for a --dialect value (given: the
// flag was set) and port.
func (ps PortDialects) WillProbe(port int, value string, given bool) bool {
	return given && value == DialectAuto || !given && ps[port] == ""
}

// ChooseDialect is DefaultPorts().Choose.
func ChooseDialect(ctx context.Context, host string, port int, value string, given bool, say func(string, ...any)) DialectChoice {
	return DefaultPorts().Choose(ctx, host, port, value, given, say)
}

// Choose settles the dialect: as given (--dialect NAME), the port's
// dialect with no --dialect on one of ps's ports, else by probing
// host:port (auto, or no --dialect on another port). Before a probe,
// say (when not nil) is given one line saying that the peer is about to
// be probed and why. The caller says the choice (Line, when Probed) once
// the test is known to run, and adds it to a usage error that follows
// (Explain); JSON carries it in the document.
func (ps PortDialects) Choose(ctx context.Context, host string, port int, value string, given bool, say func(string, ...any)) DialectChoice {
	if !ps.WillProbe(port, value, given) {
		if given {
			return DialectChoice{Dialect: value, By: ChosenByFlag}
		}
		return DialectChoice{Dialect: ps[port], By: ChosenByPort}
	}
	if say != nil {
		say("%s", ProbeNotice(host, port, given))
	}
	return probeDialect(ctx, host, port)
}

// ProbeNotice is the line said before the dialect probe of host:port
// (given: --dialect auto was asked for).
func ProbeNotice(host string, port int, given bool) string {
	why := fmt.Sprintf("port %d is neither iperf's %d nor iperf3's %d; --dialect NAME skips the probe",
		port, session.DefaultPort, session.DefaultIperf3Port)
	if given {
		why = "--dialect auto"
	}
	return fmt.Sprintf("probing %s port %d for its dialect, one TCP connection (%s)", host, port, why)
}

// Precheck checks cfg before a probe, so that what the user typed is
// judged before any packet leaves: an error only when cfg is wrong in both
// dialects the probe may choose (that of iperf2 is returned).
func Precheck(cfg session.ClientConfig) error {
	cfg.Dialect = session.DialectIperf2
	_, err := dialect.Prepare(cfg)
	if err == nil {
		return nil
	}
	cfg.Dialect = session.DialectIperf3
	if _, err3 := dialect.Prepare(cfg); err3 == nil {
		return nil
	}
	return err
}

// Probed says the choice was made (or fallen back on) by probing the peer:
// one the user should be told of.
func (c DialectChoice) Probed() bool { return c.By == ChosenByProbe || c.By == ChosenByFallback }

// Explain adds a probed choice to an error that followed it (one line).
func (c DialectChoice) Explain(err error) error {
	if err == nil || !c.Probed() {
		return err
	}
	return fmt.Errorf("%w (%s)", err, c.Line())
}

// probeDialect runs the probe's opening exchange against host:port.
func probeDialect(ctx context.Context, host string, port int) DialectChoice {
	ch, err := Detect(ctx, Config{Host: host, Port: port})
	if err != nil {
		return DialectChoice{Dialect: session.DialectIperf2, By: ChosenByFallback,
			Reason: "could not probe (" + err.Error() + "): using iperf2, the default"}
	}
	c := DialectChoice{Dialect: ch.Dialect, By: ChosenByProbe, Reason: ch.Reason,
		Answered: ch.Opening != OpeningRefused}
	if !ch.Decided {
		c.By = ChosenByFallback
	}
	c.Reason += " [" + ch.Elapsed.Round(time.Millisecond).String() + "]"
	return c
}

// Line is the stderr line of a probed choice.
func (c DialectChoice) Line() string {
	how := "chosen by probing the peer"
	if c.By == ChosenByFallback {
		how = "the probe could not tell, falling back"
	}
	return "dialect " + c.Dialect + " (" + how + "): " + c.Reason
}

// afterProbePauses bound the wait for a peer that answered the probe a
// moment ago and now refuses the test or says it is busy: an iperf3
// server closes and reopens its listening socket after each test. Ten
// more tries, 300 ms apart.
var afterProbePauses = slices.Repeat([]time.Duration{300 * time.Millisecond}, 10)

// retryable says a test that failed with err never started and the peer
// may still be winding down the probe.
func retryable(err error) bool {
	return errors.Is(err, iperf3.ErrBusy) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET)
}

// AfterProbe runs run, again while the peer that answered the probe
// refuses it (c.Answered; at most 10 times, 300 ms apart, until ctx is
// done).
func AfterProbe[T any](ctx context.Context, c DialectChoice, run func() (T, error)) (T, error) {
	var err error
	v, _ := tryAgain(ctx, afterProbePauses, func() (T, bool) {
		var v T
		v, err = run()
		return v, c.Answered && retryable(err)
	})
	return v, err
}

// tryAgain runs try, and again after each of pauses while it says so and
// ctx is not done: how the probe and the test after it wait out the gap
// an iperf3 server leaves between two tests. It returns the last result
// and how many tries made it.
func tryAgain[T any](ctx context.Context, pauses []time.Duration, try func() (T, bool)) (T, int) {
	for n := 1; ; n++ {
		v, again := try()
		if !again || n > len(pauses) {
			return v, n
		}
		select {
		case <-ctx.Done():
			return v, n
		case <-time.After(pauses[n-1]):
		}
	}
}
