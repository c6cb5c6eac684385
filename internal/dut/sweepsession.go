package dut

import "github.com/wirebench/wirebench/internal/result"

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
