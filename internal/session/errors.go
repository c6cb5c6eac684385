package session

import (
	"errors"
	"syscall"
)

// isRefused reports whether err is an ICMP port-unreachable surfacing on a
// connected UDP socket.
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
