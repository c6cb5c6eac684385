package dut

import (
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// Trials is a sweep's device (sweep.Device): Dialect, Check, Run and
// Counts are what sweep.Setup.UseDevice drives it by.

// Dialect is the dialect the device's server needs ("": iperf2's).
func (d *Trials) Dialect() string { return d.S.Dialect() }

// Check refuses, before anything runs, a test (cfg, our client's) that the
// device's server cannot take: an *UnsupportedError for what the device
// shells never run, the adapter's refusal for what this firmware lacks.
func (d *Trials) Check(cfg session.ClientConfig) error {
	t, err := ClientTest(cfg, d.Iface, d.S.Dialect())
	if err != nil {
		return err
	}
	return d.S.Check(RoleServer, t)
}

// Counts is ReceivedCounts: the device's own received and lost datagrams.
func (d *Trials) Counts(dev result.Device) (received, lost int64, ok bool) {
	return ReceivedCounts(dev)
}

// SweepSession is the device session of a sweep's trials as its document
// records it: the --dut spec, the shell, the transcript and the device's
// error that ended the sweep, if any.
func (d *Trials) SweepSession(spec string) *result.SweepDeviceSession {
	ds := &result.SweepDeviceSession{Spec: spec, Shell: d.S.Shell(), Transcript: d.S.TranscriptLines()}
	if ds.Transcript == nil {
		ds.Transcript = []string{}
	}
	if d.Failed != nil {
		ds.Error = d.Failed.Error()
	}
	return ds
}
