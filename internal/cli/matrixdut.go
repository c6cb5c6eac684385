package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// The matrix with --dut (issue 14): every cell drives the device's own
// shell. Upload cells make the device the server and run our client
// against it; download cells start a one-test wirebench server of ours and
// tell the device's client to send to it (--dut-peer, our address as the
// device reaches it). Each cell keeps the device's own figures beside ours.

// registerMatrix adds the --dut flags the matrix takes: the device's
// test uses the matrix's own -t, -b and -l.
func (f *dutFlags) registerMatrix(cmd *cobra.Command) {
	f.register(cmd, false)
	cmd.Flags().StringVar(&f.peer, "dut-peer", "", "our address `ADDR` the device sends to in download cells (default: the source address of the route to the telnet host; needed for serial and cmd)")
}

// dutMatrix is a matrix.Session that drives the device for each cell.
type dutMatrix struct {
	s     *dut.Session
	inner matrix.ClientSessions
	iface string
	peer  string
	f     *dutFlags
}

// openMatrixDUT opens the device's shell for a matrix and returns the
// session to run its cells through; cfg's dialect becomes the one the
// device's server speaks unless --dialect was given.
func (f *dutFlags) openMatrixDUT(e *env, cmd *cobra.Command, cfg *matrix.Config, inner matrix.ClientSessions) (*dutMatrix, error) {
	if inner.Latency != nil {
		return nil, usagef("--dut cannot be combined with --latency")
	}
	if cfg.Bidir {
		return nil, usagef("--dut runs one direction at a time; drop --bidir")
	}
	o, sp, err := f.options()
	if err != nil {
		return nil, err
	}
	peer := f.peer
	if peer == "" {
		if sp.Host() == "" {
			return nil, usagef("--dut-peer ADDR is needed: a %s console does not tell which of our addresses the device reaches", sp.Kind)
		}
		if peer, err = dut.RouteSource(sp.Host()); err != nil {
			return nil, fmt.Errorf("--dut-peer default: %w", err)
		}
	}
	s, err := f.openThroughout(e, o, "matrix", "cell")
	if err != nil {
		return nil, err
	}
	adoptDialect(e, s, &cfg.Base.Dialect, cmd.Flags().Changed("dialect"))
	if _, err := clientTest(cfg.Base, f.iface, s.Dialect()); err != nil {
		s.Close()
		return nil, err
	}
	cfg.PeerClient = true
	return &dutMatrix{s: s, inner: inner, iface: f.iface, peer: peer, f: f}, nil
}

// Run runs one cell: cfg.Reverse (a download cell) means the device sends.
func (d *dutMatrix) Run(ctx context.Context, cfg session.ClientConfig) (*result.Result, *result.UnderLoad, error) {
	if !cfg.Reverse {
		var lat *result.UnderLoad
		r, err := runOnDeviceServer(ctx, d.s, cfg, d.iface, func(ctx context.Context) (*result.Result, error) {
			r, l, err := d.inner.Run(ctx, cfg)
			lat = l
			return r, err
		})
		return r, lat, err
	}
	t := dut.Test{Proto: result.TCP, Peer: d.peer, Duration: cfg.Duration, Length: cfg.Length, Iface: d.iface}
	if cfg.UDP {
		t.Proto = result.UDP
		t.RateBPS = cfg.Rate.Value
		if cfg.Rate.PPS {
			t.RateBPS = cfg.Rate.Value * float64(max(cfg.Length, session.DefaultUDPLength)) * 8
		}
	}
	// Our server listens on the address the device reaches us at, on a
	// port of the system's choosing that the device is told.
	port, run, err := d.s.ListenOne(ctx, session.ServerConfig{Bind: d.peer, Port: -1, Interval: cfg.Interval})
	if err != nil {
		return nil, nil, fmt.Errorf("starting our server for the device's client: %w", err)
	}
	t.Port = port
	r, err := d.s.RunDeviceClient(ctx, t, run)
	return r, nil, err
}

// close ends the device session and writes its transcript to
// --dut-transcript.
func (d *dutMatrix) close(e *env) {
	d.f.saveTranscript(e, d.s.TranscriptLines())
	d.s.Close()
}

// writeMatrixDevice prints, per cell that has them, the device's own
// figures beside ours.
func writeMatrixDevice(w io.Writer, m *result.Matrix) error {
	for _, c := range m.Cells {
		if c.Result == nil || c.Result.Device == nil {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s:\n", c.Name()); err != nil {
			return err
		}
		if err := report.WriteDevice(w, c.Result); err != nil {
			return err
		}
	}
	return nil
}
