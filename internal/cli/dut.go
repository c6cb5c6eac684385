package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// dutFlags drive the device's own shell (--dut, docs/dut.md); their
// definitions are dut.Flags.Register's, shared with diagnose.
type dutFlags struct{ dut.Flags }

func (f *dutFlags) register(cmd *cobra.Command, server bool) { f.Register(cmd.Flags(), server) }

func (f *dutFlags) enabled() bool { return f.Enabled() }

// asked is the flags as the dut package takes them.
func (f *dutFlags) asked() dut.Flags { return f.Flags }

// checkShell rejects a --dut-shell that names no shell, with --dut or
// without (a typo is not ignored because --dut was left out).
func (f *dutFlags) checkShell() error { return usage(f.asked().CheckShell()) }

// options checks the flags and returns the session options and spec.
func (f *dutFlags) options() (dut.Options, dut.Spec, error) {
	o, sp, err := f.asked().Options()
	return o, sp, usage(err)
}

// open connects to the device; on failure the session (for its
// transcript) and the error are returned.
func (f *dutFlags) open(ctx context.Context, o dut.Options) (*dut.Session, error) {
	return dut.Open(ctx, f.Spec, o)
}

// openThroughout connects to the device for a run that needs it in every
// step (a matrix's cells, a sweep's trials): unlike a single client test
// nothing runs without it. run names the run, step its steps.
func (f *dutFlags) openThroughout(e *env, o dut.Options, run, step string) (*dut.Session, error) {
	s, err := f.open(e.ctx, o)
	if err != nil {
		return nil, fmt.Errorf("the %s needs the device in every %s: %w", run, step, err)
	}
	return s, nil
}

// adoptDialect makes *dialect the one the device's server needs, unless
// the user chose one (chosen: --dialect was given).
func adoptDialect(e *env, s *dut.Session, dialect *string, chosen bool) {
	if !chosen && s.Dialect() != "" {
		*dialect = s.Dialect()
		e.logf("device shell %s: using the %s dialect its server needs", s.Shell(), *dialect)
	}
}

// shellDialect is the dialect the shell named by --dut-shell needs, before
// it is opened ("": not known yet).
func (f *dutFlags) shellDialect() string { return f.asked().ShellDialect() }

// clientTest is dut.ClientTest, its refusals usage errors.
func clientTest(cfg session.ClientConfig, iface, devDialect string) (dut.Test, error) {
	t, err := dut.ClientTest(cfg, iface, devDialect)
	if err != nil {
		return t, usageError{err}
	}
	return t, nil
}

// runClientDUT makes the device the server and runs our client against
// it (s and openErr from openDUT).
func (f *dutFlags) runClientDUT(e *env, cfg session.ClientConfig, s *dut.Session, openErr error) (*result.Result, error) {
	r, err := f.asked().RunClient(e.ctx, cfg, s, openErr)
	if ue := (*dut.UnsupportedError)(nil); r == nil && errors.As(err, &ue) {
		return nil, usageError{err}
	}
	f.writeTranscript(e, r)
	return r, err
}

// writeTranscript saves the device session of a test to --dut-transcript.
func (f *dutFlags) writeTranscript(e *env, r *result.Result) {
	if r != nil && r.Device != nil {
		f.saveTranscript(e, r.Device.Transcript)
	}
}

// saveTranscript writes lines to --dut-transcript, when it was given.
func (f *dutFlags) saveTranscript(e *env, lines []string) {
	if err := f.WriteTranscript(lines); err != nil {
		e.logf("writing the device transcript: %v", err)
	}
}

// serverTest is the test the device runs as client against our server.
func (f *dutFlags) serverTest(udp bool, sp dut.Spec, port int) (dut.Test, error) {
	t, err := f.asked().ServerTest(udp, sp, port)
	if err != nil {
		return t, usageError{err}
	}
	if t.Peer == "" {
		if t.Peer, err = dut.RouteSource(sp.Host()); err != nil {
			return t, fmt.Errorf("--dut-peer default: %w", err)
		}
	}
	return t, nil
}

// deviceErr reports whether err is only the device's failure (the PC-side
// result stands and was printed).
func deviceErr(err error) bool {
	var de *dut.DeviceError
	return errors.As(err, &de)
}
