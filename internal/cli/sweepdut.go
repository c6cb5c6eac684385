package cli

import (
	"io"

	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// The sweep with --dut (issue 14): the device is the receiver of every
// trial; the runner is sweep's (sweep.Setup.UseDevice), the device
// internal/dut's Trials.

// sweepDUT drives the device for a sweep's trials.
type sweepDUT struct {
	f *dutFlags
	dut.Trials
}

// openSweepDUT checks the flags against the sweep, opens the device's
// shell and makes setup's runner start the device's server for every
// trial; the test description records the device and the dialect.
func (f *dutFlags) openSweepDUT(e *env, setup *sweep.Setup, opt sweep.Options) (*sweepDUT, error) {
	if err := opt.CheckDevice(); err != nil {
		return nil, usageError{err}
	}
	o, _, err := f.options()
	if err != nil {
		return nil, err
	}
	s, err := f.openThroughout(e, o, "sweep", "trial")
	if err != nil {
		return nil, err
	}
	d := &sweepDUT{f: f, Trials: dut.Trials{S: s, Iface: f.Iface}}
	var dialect string // UseDevice sets the runner's; this says it
	adoptDialect(e, s, &dialect, false)
	if err := setup.UseDevice(&d.Trials, f.Spec); err != nil {
		s.Close()
		return nil, err
	}
	return d, nil
}

// finish records the session in the sweep's document (and so in the
// results store) and in --dut-transcript, and closes it.
func (d *sweepDUT) finish(e *env, res *result.Sweep) {
	res.Device = d.SweepSession(d.f.Spec)
	d.f.saveTranscript(e, res.Device.Transcript)
	d.S.Close()
}

// writeSweepDevice prints, per size, the device's own figures of the
// confirming trial beside ours (report.WriteSweepDevice).
func writeSweepDevice(w io.Writer, r *result.Sweep) error {
	return report.WriteSweepDevice(w, r, dut.ReceivedCounts)
}
