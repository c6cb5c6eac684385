package diagnose

import (
	"context"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// A diagnosis through the device's own shell (--dut): the device is the
// far end. Every load, size and loss run starts the device's server for
// it through its shell, as sweep --dut's trials do (sweep.Setup.UseDevice
// over dut.Trials), and is judged on its report; the upload and TCP runs
// are the device's server's too; the download run is the device's client
// sending to a one-test server of ours at --dut-peer, as a matrix's
// download cells are. A shell times no round trips and no arrivals, so the
// queue cannot be measured and a tick not seen: the diagnosis says so.

// deviceUnseen is what a device's shell cannot show, said in every
// diagnosis through one.
var deviceUnseen = []string{
	"the queue in front of the limit: a device's shell times no round trips, so how long the device buffers under load cannot be measured (a reflector on the device, with --mode reflect and no --dut, can)",
	"where in the device the limit lies: the runs measure the firmware's own test server (zperf, iperf) over its network stack, so a limit of that program cannot be told from one of the stack or the interface",
}

// deviceOverhead is what a run through the device's shell takes beyond its
// length, for the budget's planning: the server's start and stop through
// the shell, and its report.
const deviceOverhead = 3 * time.Second

// device is the --dut part of a diagnosis's setup.
type device struct {
	flags  dut.Flags
	opts   dut.Options
	spec   dut.Spec
	sweep  *sweep.Setup
	trials *dut.Trials
}

// checkDevice checks the --dut flags (every error a mistake in them);
// nil without --dut. A --dut-shell that names no shell is refused without
// --dut too: a typo is not ignored because --dut was left out.
func (o Options) checkDevice(so sweep.Options, ss *sweep.Setup) (*device, error) {
	if o.DUT.Shell != "" || o.DUT.Enabled() {
		if err := o.DUT.CheckShell(); err != nil {
			return nil, err
		}
	}
	if !o.DUT.Enabled() {
		return nil, nil
	}
	if err := so.CheckDevice(); err != nil {
		return nil, err
	}
	opts, sp, err := o.DUT.Options()
	if err != nil {
		return nil, err
	}
	return &device{flags: o.DUT, opts: opts, spec: sp, sweep: ss}, nil
}

// OpenDevice opens the device's shell (--dut) and makes every run of s go
// through it; logf says what was chosen. Without --dut it does nothing. A
// test the device cannot take is a *dut.UnsupportedError.
func (s *Setup) OpenDevice(ctx context.Context, logf func(string, ...any)) error {
	d := s.dev
	if d == nil {
		return nil
	}
	sh, err := dut.Open(ctx, d.flags.Spec, d.opts)
	if err != nil {
		return fmt.Errorf("the diagnosis needs the device in every run: %w", err)
	}
	d.trials = &dut.Trials{S: sh, Iface: d.flags.Iface}
	if err := d.sweep.UseDevice(d.trials, d.flags.Spec); err != nil {
		sh.Close()
		return err
	}
	if sh.Dialect() != "" {
		logf("device shell %s: using the %s dialect its server needs", sh.Shell(), sh.Dialect())
	}
	run := d.sweep.Runner.(sweep.SessionRunner)
	s.Runner, s.Test.DUT = run, d.flags.Spec
	s.Config.ByTime, s.Config.Overhead = true, deviceOverhead
	s.Config.Unseen = append(s.Config.Unseen, deviceUnseen...)
	s.Config.TCP = func(ctx context.Context, length time.Duration) (*result.Result, error) {
		c := run.Base
		c.UDP, c.Duration = false, length
		return d.trials.Run(ctx, c)
	}
	if err := sh.Check(dut.RoleServer, dut.Test{Proto: result.TCP}); err != nil {
		s.Config.TCP = nil
		s.Config.Unseen = append(s.Config.Unseen, fmt.Sprintf("TCP against UDP: the device's firmware (%s) runs no TCP server: %v", sh.Shell(), err))
	}
	peer, peerErr := d.peer()
	s.Config.Direction = func(ctx context.Context, download bool, size int, pps float64, length time.Duration) (*result.Result, error) {
		c := run.Config(sweep.Spec{Size: size, RatePPS: pps, Duration: length})
		if !download {
			return d.trials.Run(ctx, c)
		}
		if peerErr != nil {
			return nil, peerErr
		}
		c.Reverse = true
		r, _, err := (&dut.Cells{S: sh, Iface: d.flags.Iface, Peer: peer}).Run(ctx, c)
		return r, err
	}
	return nil
}

// peer is our address the device's client sends to in the download run:
// --dut-peer, else the source address of the route to a telnet host.
func (d *device) peer() (string, error) {
	if d.flags.Peer != "" {
		return d.flags.Peer, nil
	}
	if d.spec.Host() == "" {
		return "", fmt.Errorf("the device sends to us only at --dut-peer ADDR: a %s console does not tell which of our addresses the device reaches", d.spec.Kind)
	}
	p, err := dut.RouteSource(d.spec.Host())
	if err != nil {
		return "", fmt.Errorf("--dut-peer default: %w", err)
	}
	return p, nil
}

// closeDevice records the session with the device's shell in doc, writes
// --dut-transcript (a failure said on warn) and closes the shell.
func (s *Setup) closeDevice(doc *result.Diagnosis, warn func(string, ...any)) {
	d := s.dev
	if d == nil || d.trials == nil {
		return
	}
	doc.Device = d.trials.SweepSession(d.flags.Spec)
	if err := d.flags.WriteTranscript(doc.Device.Transcript); err != nil {
		warn("writing the device transcript: %v", err)
	}
	d.trials.S.Close()
}
