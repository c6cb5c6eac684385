package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/wirebench/wirebench/internal/dut"
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
func (f *dutFlags) openSweepDUT(e *env, setup *sweepSetup, mode string, packets int64) (*sweepDUT, error) {
	if mode == sweep.ModeReflect {
		return nil, usagef("--dut starts the device's iperf server for each trial: use --mode wirebench or iperf2, not reflect")
	}
	if packets > 0 {
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
	base := session.ClientConfig{Host: setup.test.Host, Port: setup.test.Port, Dialect: session.DialectIperf2}
	adoptDialect(e, s, &base.Dialect, false)
	t, err := clientTest(sweep.SessionRunner{Base: base}.Config(sweep.Spec{Size: setup.cfg.Sizes[0], RatePPS: 1, Duration: setup.cfg.Trial}), f.iface, s.Dialect())
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
	setup.runner = sweep.SessionRunner{Base: base, Run: trial, DeviceCounts: dut.ReceivedCounts}
	setup.test.DUT, setup.test.Dialect = f.spec, base.Dialect
	return d, nil
}

// finish records the session in the sweep's document (and so in the
// results store) and in --dut-transcript, and closes it.
func (d *sweepDUT) finish(e *env, res *result.Sweep) {
	ds := &result.SweepDeviceSession{Spec: d.f.spec, Shell: d.S.Shell(), Transcript: d.S.TranscriptLines()}
	if ds.Transcript == nil {
		ds.Transcript = []string{}
	}
	if d.Failed != nil {
		ds.Error = d.Failed.Error()
	}
	res.Device = ds
	d.f.saveTranscript(e, ds.Transcript)
	d.S.Close()
}

// writeSweepDevice prints, per size, the device's own figures of the
// confirming trial beside ours, with the difference.
func writeSweepDevice(w io.Writer, r *result.Sweep) error {
	if r.Device == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "device %s (%s), its own report of each size's confirming trial; the loss was judged on the counts of\n", r.Device.Shell, r.Device.Spec)
	b.WriteString("  peer_report: the server's report to our client, device: the device's report (no report came back)\n")
	fmt.Fprintf(&b, "%-7s %-12s %-9s %-9s %-9s %-9s %-12s %-13s %s\n", "size", "counted by", "sent", "peer rx", "dev rx", "dev lost", "our Mbit/s", "dev Mbit/s", "difference device − ours")
	for _, s := range r.Sizes {
		d := s.Device
		if d == nil {
			fmt.Fprintf(&b, "%-7d no device figures\n", s.Size)
			continue
		}
		peer, sent, oursBPS := "-", s.Sent, s.RateBPS
		for _, t := range s.TrialLog {
			if t.Device == d && t.CountedBy == result.CountedByPeer {
				peer = fmt.Sprint(t.Received) // the confirming trial's
			}
		}
		ours := fmt.Sprintf("%.2f", oursBPS/1e6)
		counted := s.CountedBy
		if counted == "" {
			counted = "none"
		}
		rx, lost, devBPS := optInt(d.Packets), optInt(d.Lost), "-"
		var diff []string
		if d.BitsPerSecond != nil {
			devBPS = fmt.Sprintf("%.2f", *d.BitsPerSecond/1e6)
			if oursBPS > 0 {
				diff = append(diff, fmt.Sprintf("rate %+.1f%%", (*d.BitsPerSecond-oursBPS)/oursBPS*100))
			}
		}
		if got, _, ok := dut.ReceivedCounts(*d); ok {
			diff = append(diff, fmt.Sprintf("received %+d of %d sent", got-sent, sent))
		}
		if d.Error != "" {
			diff = append(diff, "device error: "+d.Error)
		}
		fmt.Fprintf(&b, "%-7d %-12s %-9d %-9s %-9s %-9s %-12s %-13s %s\n", s.Size, counted, sent, peer, rx, lost, ours, devBPS, strings.Join(diff, ", "))
	}
	b.WriteString("(our sender counts its FIN as one datagram, as iperf does; a device counts data only, so −1 received is no loss)\n")
	if r.Device.Error != "" {
		fmt.Fprintf(&b, "device: %s\n", r.Device.Error)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// optInt prints an optional count, "-" when the firmware does not print it.
func optInt(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
