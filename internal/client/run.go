package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	iperf3session "github.com/wirebench/wirebench/internal/session/iperf3"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// ChooseDialect picks cfg's dialect before anything runs; given says
// --dialect was on the command line. With device (a --dut device runs the
// peer) the device's server decides unless --dialect names one; otherwise
// the port, --dialect or a short probe of the peer decide
// (probe.ChooseDialect; say, when not nil, is told of a probe before it
// starts). A mistake in the flags is a session.ConfigError.
func ChooseDialect(ctx context.Context, cfg session.ClientConfig, given, device bool, say func(string, ...any)) (probe.DialectChoice, error) {
	byPort := probe.DialectChoice{Dialect: session.DialectIperf3, By: probe.ChosenByPort}
	if device {
		switch {
		case given && cfg.Dialect == probe.DialectAuto:
			return byPort, session.ConfigError{Err: errors.New("--dialect auto cannot be combined with --dut: the device's shell says which dialect its server needs")}
		case given:
			return probe.DialectChoice{Dialect: cfg.Dialect, By: probe.ChosenByFlag}, nil
		case cfg.Port != session.DefaultIperf3Port:
			return probe.DialectChoice{By: probe.ChosenByDevice}, nil
		}
		return byPort, nil
	}
	if probe.WillProbe(cfg.Port, cfg.Dialect, given) {
		if err := probe.Precheck(cfg); err != nil {
			return byPort, err
		}
	}
	choice := probe.ChooseDialect(ctx, cfg.Host, cfg.Port, cfg.Dialect, given, say)
	if ctx.Err() != nil {
		return choice, fmt.Errorf("interrupted while probing %s for its dialect: no test ran", cfg.Host)
	}
	return choice, nil
}

// Run runs the test (dialect.RunClient), again while a peer that has just
// answered the dialect probe refuses it (probe.AfterProbe), and beside the
// RTT probe lat when lat is not nil: this is echo.ClientUnderLoad, whose
// latency result is nil when the probe failed once the test had run (the
// test's result then carries a warning saying why). A probe that cannot
// start is an error naming --latency (a session.ConfigError for a bad
// probe configuration).
func Run(ctx context.Context, cfg session.ClientConfig, choice probe.DialectChoice, lat *echo.LoadProbeConfig) (*result.Result, *result.UnderLoad, error) {
	type ran struct {
		r   *result.Result
		lat *result.UnderLoad
	}
	got, err := probe.AfterProbe(ctx, choice, func() (ran, error) {
		r, ul, err := runOnce(ctx, cfg, lat)
		return ran{r, ul}, err
	})
	return got.r, got.lat, err
}

// runOnce is one try of Run.
func runOnce(ctx context.Context, cfg session.ClientConfig, lat *echo.LoadProbeConfig) (*result.Result, *result.UnderLoad, error) {
	if lat == nil {
		r, err := dialect.RunClient(ctx, cfg)
		return r, nil, err
	}
	r, ul, err := echo.ClientUnderLoad(ctx, cfg, *lat)
	if ce := (echo.ConfigError{}); errors.As(err, &ce) {
		return nil, nil, session.ConfigError{Err: fmt.Errorf("--latency: %w", err)}
	}
	if err != nil && r == nil {
		return nil, nil, fmt.Errorf("--latency: %w", err)
	}
	if err != nil {
		return nil, nil, err
	}
	return r, ul, nil
}

// Note records on r how its dialect was chosen. When the probe had just
// heard iperf 2 and an iperf 2 test failed the way a test sent to an
// iperf3 server fails, it replaces that hint with what happened.
func Note(r *result.Result, choice probe.DialectChoice, ran string) {
	r.Test.DialectChosenBy, r.Test.DialectReason = choice.By, choice.Reason
	if choice.By == probe.ChosenByProbe && ran == session.DialectIperf2 {
		// The peer acked as iperf 2 a moment ago: not an iperf3 server.
		r.Error = strings.Replace(r.Error, session.Iperf3Hint, "the peer acked as iperf 2 when probed a moment ago, "+
			"so it is not an iperf3 server: iperf 2.1.8's server sometimes drops a test that follows another; run it again", 1)
	}
}

// CheckIperf3 says why iperf3's own -J document cannot be had for cfg:
// it is made by the iperf3 dialect only.
func CheckIperf3(cfg session.ClientConfig, choice probe.DialectChoice) error {
	switch {
	case cfg.Dialect == session.DialectIperf3:
		return nil
	case choice.Reason != "":
		return fmt.Errorf("--json-iperf3 needs the iperf3 dialect, and the peer is not an iperf3 server (%s)", choice.Line())
	}
	return errors.New("--json-iperf3 needs the iperf3 dialect (--dialect iperf3, or -p 5201)")
}

// RunIperf3 runs an iperf3 test (CheckIperf3 first) for iperf3's own -J
// document, again while a peer that has just answered the dialect probe
// refuses it; the result notes how the dialect was chosen.
func RunIperf3(ctx context.Context, cfg session.ClientConfig, choice probe.DialectChoice) (*result.Result, *iperf3.Report, error) {
	cfg.OnInterval = nil
	type ran struct {
		r   *result.Result
		rep *iperf3.Report
	}
	got, err := probe.AfterProbe(ctx, choice, func() (ran, error) {
		r, rep, err := iperf3session.RunClient(ctx, cfg)
		return ran{r, rep}, err
	})
	if err != nil {
		return nil, nil, err
	}
	Note(got.r, choice, cfg.Dialect)
	return got.r, got.rep, nil
}
