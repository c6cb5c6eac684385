package sweep

import (
	"context"
	"errors"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// The sweep with a device driven through its own shell (--dut, issue 14):
// the device is the receiver. For every trial its own server is started
// through its shell, our client sends the trial's rate and size, and the
// device's report is parsed into the trial. The server is started afresh
// per trial: zperf's download stand-in counts one session per start,
// ESP-IDF's server ends by its -t timer, and a fresh start gives each
// trial its own report, so every firmware is driven the same way. The
// device is internal/dut's Trials; a diagnosis (internal/diagnose) drives
// its runs through the same runner.

// Device is a device's own shell that receives a sweep's trials.
type Device interface {
	// Dialect is the dialect the device's server needs ("": iperf2's).
	Dialect() string
	// Check refuses, before anything runs, a test (our client's cfg) the
	// device's server cannot take.
	Check(cfg session.ClientConfig) error
	// Run starts the device's server, runs our client (cfg) against it
	// and returns its result with the device's own figures; an error ends
	// the sweep.
	Run(ctx context.Context, cfg session.ClientConfig) (*result.Result, error)
	// Counts reads the data datagrams received and lost from the device's
	// own figures; ok is false when its firmware prints none.
	Counts(d result.Device) (received, lost int64, ok bool)
}

// CheckDevice refuses the options a sweep through a device's shell cannot
// run, before the device is opened. Every error is a mistake in them.
func (o Options) CheckDevice() error {
	if o.Mode == ModeReflect {
		return errors.New("--dut starts the device's iperf server for each trial: use --mode wirebench or iperf2, not reflect")
	}
	if o.Packets > 0 {
		return errors.New("--dut needs --trial: the device servers end by time, not by a datagram count")
	}
	return nil
}

// UseDevice makes s's trials run through dev, in the dialect its server
// needs, and records dev's spec (the --dut line) and the dialect in the
// test description. It returns Check's error for a trial dev cannot take;
// s is then unchanged.
func (s *Setup) UseDevice(dev Device, spec string) error {
	base := session.ClientConfig{Host: s.Test.Host, Port: s.Test.Port, Dialect: session.DialectIperf2}
	if d := dev.Dialect(); d != "" {
		base.Dialect = d
	}
	run := SessionRunner{Base: base, DeviceCounts: dev.Counts,
		Run: func(ctx context.Context, _ Spec, cfg session.ClientConfig) (*result.Result, error) {
			return dev.Run(ctx, cfg)
		}}
	if err := dev.Check(run.Config(Spec{Size: s.Config.Sizes[0], RatePPS: 1, Duration: s.Config.Trial})); err != nil {
		return err
	}
	s.Runner = run
	s.Test.DUT, s.Test.Dialect = spec, base.Dialect
	return nil
}
