package cli

import (
	"context"
	"io"

	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sweep"
)

// The sweep with --dut (issue 14): the device is the receiver. For every
// trial its own server is started through its shell, as the matrix's
// upload cells do, our client sends the trial's rate and size, and the
// device's report is parsed into the trial. The server is started afresh
// per trial: zperf's download stand-in counts one session per start,
// ESP-IDF's server ends by its -t timer, and a fresh start gives each
// trial its own report, so every adapter is driven the same way.

// sweepDUT drives the device for a sweep's trials.
type sweepDUT struct {
	f *dutFlags
	dut.Trials
}

// openSweepDUT checks the flags against the sweep, opens the device's
// shell and makes setup's runner start the device's server for every
// trial; the test description records the device and the dialect.
func (f *dutFlags) openSweepDUT(e *env, setup *sweep.Setup, opt sweep.Options) (*sweepDUT, error) {
	if opt.Mode == sweep.ModeReflect {
		return nil, usagef("--dut starts the device's iperf server for each trial: use --mode wirebench or iperf2, not reflect")
	}
	if opt.Packets > 0 {
		return nil, usagef("--dut needs --trial: the device servers end by time, not by a datagram count")
	}
	o, _, err := f.options()
	if err != nil {
		return nil, err
	}
	s, err := f.openThroughout(e, o, "sweep", "trial")
	if err != nil {
		return nil, err
	}
	d := &sweepDUT{f: f, Trials: dut.Trials{S: s, Iface: f.iface}}
	base := session.ClientConfig{Host: setup.Test.Host, Port: setup.Test.Port, Dialect: session.DialectIperf2}
	adoptDialect(e, s, &base.Dialect, false)
	t, err := clientTest(sweep.SessionRunner{Base: base}.Config(sweep.Spec{Size: setup.Config.Sizes[0], RatePPS: 1, Duration: setup.Config.Trial}), f.iface, s.Dialect())
	if err == nil {
		err = s.Check(dut.RoleServer, t)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	trial := func(ctx context.Context, _ sweep.Spec, cfg session.ClientConfig) (*result.Result, error) {
		return d.Run(ctx, cfg)
	}
	setup.Runner = sweep.SessionRunner{Base: base, Run: trial, DeviceCounts: dut.ReceivedCounts}
	setup.Test.DUT, setup.Test.Dialect = f.spec, base.Dialect
	return d, nil
}

// finish records the session in the sweep's document (and so in the
// results store) and in --dut-transcript, and closes it.
func (d *sweepDUT) finish(e *env, res *result.Sweep) {
	res.Device = d.SweepSession(d.f.spec)
	d.f.saveTranscript(e, res.Device.Transcript)
	d.S.Close()
}

// writeSweepDevice prints, per size, the device's own figures of the
// confirming trial beside ours (report.WriteSweepDevice).
func writeSweepDevice(w io.Writer, r *result.Sweep) error {
	return report.WriteSweepDevice(w, r, dut.ReceivedCounts)
}
