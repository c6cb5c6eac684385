//go:build linux || darwin

package zshell

import (
	"context"
	"fmt"
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// StartPTY runs a stand-in shell on the master side of a new pty pair and
// returns it with the --dut spec of the slave side, where a session opens
// it as a serial port. close ends the shell and releases the pty.
func StartPTY(ctx context.Context, o Options) (s *Shell, spec string, close func(), err error) {
	ptm, pts, err := pty.Open()
	if err != nil {
		return nil, "", nil, fmt.Errorf("open a pty: %w", err)
	}
	// pty.Open leaves the master blocking, where Close cannot interrupt the
	// shell's pending read: use a non-blocking duplicate the runtime polls.
	fd, err := unix.Dup(int(ptm.Fd()))
	ptm.Close()
	if err != nil {
		pts.Close()
		return nil, "", nil, fmt.Errorf("duplicate the pty master: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		pts.Close()
		return nil, "", nil, fmt.Errorf("pty master non-blocking: %w", err)
	}
	m := os.NewFile(uintptr(fd), "ptmx")
	ctx, cancel := context.WithCancel(ctx)
	s = Serve(ctx, m, o)
	return s, "serial:" + pts.Name() + "?baud=115200", func() {
		cancel()
		m.Close()
		pts.Close()
		s.stopAll()
	}, nil
}
