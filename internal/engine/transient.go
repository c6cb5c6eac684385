package engine

import (
	"errors"
	"syscall"
)

// isTransientRead reports whether a read error only tells of an earlier
// datagram's fate (an ICMP error queued on the socket) and reading may go on.
func isTransientRead(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}
