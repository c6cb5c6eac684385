package cli

import (
	"errors"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/session"
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

// chooseDialect settles the dialect: as given (--dialect NAME), iperf3 on
// port 5201, else by probing host:port (auto, or no --dialect). text says
// the choice goes to stderr (text output); JSON carries it in the document.
func chooseDialect(e *env, host string, port int, value string, given, text bool) dialectChoice {
	switch {
	case given && value != dialectAuto:
		return dialectChoice{dialect: value, by: chosenByFlag}
	case !given && port == session.DefaultIperf3Port:
		return dialectChoice{dialect: session.DialectIperf3, by: chosenByPort, reason: "port 5201 is iperf3's"}
	}
	c := probeDialect(e, host, port)
	if text {
		e.logf("%s", c.line())
	}
	return c
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
	return errors.Is(err, session.ErrIperf3Busy) || errors.Is(err, syscall.ECONNREFUSED) ||
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
