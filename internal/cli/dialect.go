package cli

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3"
)

// dialectAuto is the --dialect value that probes the peer first.
const dialectAuto = "auto"

// How a test's dialect was chosen (dialect_chosen_by in JSON).
const (
	chosenByFlag     = "flag"     // --dialect NAME
	chosenByPort     = "port"     // -p 5201 without --dialect: iperf3
	chosenByProbe    = "probe"    // the peer's answer to the probe's opening
	chosenByFallback = "fallback" // the probe could not tell: iperf2
	chosenByDevice   = "device"   // --dut: the device's server needs it
)

// dialectChoice is the dialect a command runs in and why.
type dialectChoice struct {
	dialect string
	by      string // chosenBy* values
	reason  string
	// answered is set when the probe saw the peer answer: a test that
	// follows it and is refused, or told busy, is tried again (an iperf3
	// server reopens its listener after each test).
	answered bool
}

// dialectFlagHelp is the --dialect flag's help line.
const dialectFlagHelp = "wire dialect `NAME`: iperf2, iperf2-legacy, raw, iperf3 or auto (default: iperf3 when -p 5201, else auto: " +
	"a short TCP exchange tells an iperf3 server from iperf 2.1+; device dialects are never guessed)"

// willProbe says chooseDialect probes the peer for these flags.
func willProbe(port int, value string, given bool) bool {
	return given && value == dialectAuto || !given && port != session.DefaultIperf3Port
}

// chooseDialect settles the dialect: as given (--dialect NAME), iperf3 on
// port 5201, else by probing host:port (auto, or no --dialect). The caller
// says the choice (announce) once the test is known to run, and adds it
// to a usage error that follows (explain); JSON carries it in the document.
func chooseDialect(e *env, host string, port int, value string, given bool) dialectChoice {
	if !willProbe(port, value, given) {
		if given {
			return dialectChoice{dialect: value, by: chosenByFlag}
		}
		return dialectChoice{dialect: session.DialectIperf3, by: chosenByPort}
	}
	return probeDialect(e, host, port)
}

// precheck checks cfg before a probe, so that what the user typed is
// judged before any packet leaves: an error only when cfg is wrong in both
// dialects the probe may choose (that of iperf2 is returned).
func precheck(cfg session.ClientConfig) error {
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

// announce says a probed choice on stderr (text output).
func (c dialectChoice) announce(e *env) {
	if c.by == chosenByProbe || c.by == chosenByFallback {
		e.logf("%s", c.line())
	}
}

// explain adds a probed choice to an error that followed it (one line).
func (c dialectChoice) explain(err error) error {
	if err == nil || (c.by != chosenByProbe && c.by != chosenByFallback) {
		return err
	}
	return fmt.Errorf("%w (%s)", err, c.line())
}

// probeDialect runs the probe's opening exchange against host:port.
func probeDialect(e *env, host string, port int) dialectChoice {
	ch, err := probe.Detect(e.ctx, probe.Config{Host: host, Port: port})
	if err != nil {
		return dialectChoice{dialect: session.DialectIperf2, by: chosenByFallback,
			reason: "could not probe (" + err.Error() + "): using iperf2, the default"}
	}
	c := dialectChoice{dialect: ch.Dialect, by: chosenByProbe, reason: ch.Reason,
		answered: ch.Opening != probe.OpeningRefused}
	if !ch.Decided {
		c.by = chosenByFallback
	}
	c.reason += " [" + ch.Elapsed.Round(time.Millisecond).String() + "]"
	return c
}

// line is the stderr line of a probed choice.
func (c dialectChoice) line() string {
	how := "chosen by probing the peer"
	if c.by == chosenByFallback {
		how = "the probe could not tell, falling back"
	}
	return "dialect " + c.dialect + " (" + how + "): " + c.reason
}

// retriesAfterProbe and retryPause bound the wait for a peer that answered
// the probe a moment ago and now refuses the test or says it is busy: an
// iperf3 server closes and reopens its listening socket after each test.
const (
	retriesAfterProbe = 10
	retryPause        = 300 * time.Millisecond
)

// retryable says a test that failed with err never started and the peer
// may still be winding down the probe.
func retryable(err error) bool {
	return errors.Is(err, iperf3.ErrBusy) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET)
}

// afterProbe runs run, again while the peer that answered the probe
// refuses it (c.answered; at most retriesAfterProbe times).
func afterProbe[T any](e *env, c dialectChoice, run func() (T, error)) (T, error) {
	for i := 0; ; i++ {
		v, err := run()
		if !c.answered || i == retriesAfterProbe || !retryable(err) {
			return v, err
		}
		select {
		case <-e.ctx.Done():
			return v, err
		case <-time.After(retryPause):
		}
	}
}
