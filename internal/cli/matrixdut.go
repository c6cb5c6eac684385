package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/matrix"
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
	f.RegisterPeer(cmd.Flags(), "our address `ADDR` the device sends to in download cells (default: the source address of the route to the telnet host; needed for serial and cmd)")
}

// dutMatrix is a matrix.Session that drives the device for each cell.
type dutMatrix struct {
	dut.Cells
	f *dutFlags
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
	peer := f.Peer
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
	if _, err := clientTest(cfg.Base, f.Iface, s.Dialect()); err != nil {
		s.Close()
		return nil, err
	}
	cfg.PeerClient = true
	return &dutMatrix{Cells: dut.Cells{S: s, Inner: inner.Run, Iface: f.Iface, Peer: peer}, f: f}, nil
}

// close ends the device session and writes its transcript to
// --dut-transcript.
func (d *dutMatrix) close(e *env) {
	d.f.saveTranscript(e, d.S.TranscriptLines())
	d.S.Close()
}
