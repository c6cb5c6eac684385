package dut

// Runs where our side is the client of a wirebench command: the device is
// the server (a client test, a matrix's upload cells, a sweep's trials) or,
// in a matrix's download cells, the client of a one-test server of ours.

import (
	"context"
	"errors"
	"fmt"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// UnsupportedError says a test cannot be run with the device at all: a
// mistake in what was asked, not a failure of the device or the network.
type UnsupportedError struct{ msg string }

// Error says what the device cannot run, and what to change.
func (e *UnsupportedError) Error() string { return e.msg }

func unsupported(format string, args ...any) error {
	return &UnsupportedError{fmt.Sprintf(format, args...)}
}

// ClientTest checks that a client run (cfg) can have the device as its
// server and returns the device's test; devDialect is the dialect the
// device's server needs (iperf3: a Zephyr named zephyr-iperf3). Its errors
// are *UnsupportedError.
func ClientTest(cfg session.ClientConfig, iface, devDialect string) (Test, error) {
	switch {
	case cfg.Dialect == session.DialectIperf3 && devDialect != session.DialectIperf3:
		return Test{}, unsupported("--dut drives iperf2-dialect firmware; of the device shells only --dut-shell %s speaks iperf3", ZephyrIperf3Shell)
	case cfg.Reverse || cfg.Tradeoff || cfg.Dual || cfg.FullDuplex || cfg.Bidir:
		return Test{}, unsupported("--dut runs one plain test; -R, -r, -d, --full-duplex and --bidir are not supported by the device shells")
	case cfg.Parallel > 1:
		return Test{}, unsupported("--dut runs one stream; drop -P")
	case cfg.Bytes > 0:
		return Test{}, unsupported("--dut needs a time (-t): the device servers end by time, not by -n")
	}
	t := Test{Proto: "tcp", Port: cfg.Port, Duration: cfg.Duration, Length: cfg.Length, Iface: iface}
	if cfg.UDP {
		t.Proto = "udp"
	}
	return t, nil
}

// RunServerFor makes the device the server for cfg's test and runs client
// (our side of cfg) against it: the device-receives step shared by client,
// matrix and sweep --dut.
func (s *Session) RunServerFor(ctx context.Context, cfg session.ClientConfig, iface string, client Runner) (*result.Result, error) {
	t, err := ClientTest(cfg, iface, s.Dialect())
	if err != nil {
		return nil, err
	}
	return s.RunDeviceServer(ctx, t, client)
}

// Trials runs a sweep's trials with the device as the server, one test
// each. A device that fails (silent, garbage, reset, line dropped) ends
// the sweep: its figures would be missing from every later trial.
type Trials struct {
	S     *Session
	Iface string
	// Failed is the device's error that ended the sweep, if any.
	Failed error
}

// Run runs one trial: our client (cfg) against the device's server.
func (d *Trials) Run(ctx context.Context, cfg session.ClientConfig) (*result.Result, error) {
	r, err := d.S.RunServerFor(ctx, cfg, d.Iface, func(ctx context.Context) (*result.Result, error) {
		return dialect.RunClient(ctx, cfg)
	})
	if r != nil && r.Device != nil && r.Device.Error != "" && ctx.Err() == nil {
		d.Failed = fmt.Errorf("the device (%s) failed: %s", d.S.Shell(), r.Device.Error)
		var de *DeviceError
		if err != nil && !errors.As(err, &de) {
			return r, fmt.Errorf("%w (and our client: %v)", d.Failed, err)
		}
		return r, d.Failed
	}
	var de *DeviceError
	if errors.As(err, &de) && ctx.Err() == nil {
		d.Failed = fmt.Errorf("the device (%s) failed: %w", d.S.Shell(), de.Err)
		return r, d.Failed
	}
	return r, err
}

// Cells runs a matrix's cells through the device: upload cells make the
// device the server and run Inner (our client) against it; download cells
// start a one-test wirebench server of ours on Peer (our address as the
// device reaches it) and tell the device's client to send to it.
type Cells struct {
	S     *Session
	Inner func(ctx context.Context, cfg session.ClientConfig) (*result.Result, *result.UnderLoad, error)
	Iface string
	Peer  string
}

// Run runs one cell: cfg.Reverse (a download cell) means the device sends.
func (d *Cells) Run(ctx context.Context, cfg session.ClientConfig) (*result.Result, *result.UnderLoad, error) {
	if !cfg.Reverse {
		var lat *result.UnderLoad
		r, err := d.S.RunServerFor(ctx, cfg, d.Iface, func(ctx context.Context) (*result.Result, error) {
			r, l, err := d.Inner(ctx, cfg)
			lat = l
			return r, err
		})
		return r, lat, err
	}
	t := Test{Proto: result.TCP, Peer: d.Peer, Duration: cfg.Duration, Length: cfg.Length, Iface: d.Iface}
	if cfg.UDP {
		t.Proto = result.UDP
		t.RateBPS = cfg.Rate.Value
		if cfg.Rate.PPS {
			t.RateBPS = cfg.Rate.Value * float64(max(cfg.Length, session.DefaultUDPLength)) * 8
		}
	}
	// Our server listens on the address the device reaches us at, on a
	// port of the system's choosing that the device is told.
	port, run, err := d.S.ListenOne(ctx, session.ServerConfig{Bind: d.Peer, Port: -1, Interval: cfg.Interval})
	if err != nil {
		return nil, nil, fmt.Errorf("starting our server for the device's client: %w", err)
	}
	t.Port = port
	r, err := d.S.RunDeviceClient(ctx, t, run)
	return r, nil, err
}

// RunClient runs the client command's test with the device as its server:
// our client (cfg) against the device's, s and openErr being Open's. When
// the device could not be opened, our client still runs (WithoutDevice).
// A test the device cannot run is an *UnsupportedError, returned before
// anything runs.
func (f Flags) RunClient(ctx context.Context, cfg session.ClientConfig, s *Session, openErr error) (*result.Result, error) {
	devDialect := f.ShellDialect()
	if s != nil && openErr == nil {
		devDialect = s.Dialect()
	}
	t, err := ClientTest(cfg, f.Iface, devDialect)
	if err != nil {
		return nil, err
	}
	client := func(ctx context.Context) (*result.Result, error) { return dialect.RunClient(ctx, cfg) }
	if openErr != nil {
		return WithoutDevice(ctx, RoleServer, f.Shell, openErr, s, client)
	}
	return s.RunDeviceServer(ctx, t, client)
}
