//go:build !linux

package engine

import (
	"net"
	"syscall"
	"time"
)

// discardReader is Linux only (recv with MSG_TRUNC); elsewhere the
// receiver reads into its buffer.
type discardReader struct{}

// newDiscardReader returns nil: conn is read with conn.Read.
func newDiscardReader(net.Conn, bool) *discardReader { return nil }

// Read is never called: newDiscardReader returns nil.
func (*discardReader) Read() (int, error) { return 0, nil }

func (*discardReader) observe(int, time.Time)                       {}
func (*discardReader) deadline(_, idle time.Time) (time.Time, bool) { return idle, !idle.IsZero() }
func (*discardReader) ticked() bool                                 { return false }
func (*discardReader) close()                                       {}

func (*discardReader) wantsDeadline() bool { return false }

func (*discardReader) arrival(time.Time) (time.Time, bool) { return time.Time{}, false }

// stampOn does nothing here: kernel arrival stamps of TCP data are read
// on Linux only.
func stampOn(syscall.RawConn) error { return nil }
