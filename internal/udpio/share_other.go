//go:build !linux

package udpio

import (
	"errors"
	"syscall"
)

// SharingSupported says whether ShareAddr and QueueEmpty work here; off
// Linux they do not, and a server reads every peer on its listener.
const SharingSupported = false

// ShareAddr is not supported off Linux.
func ShareAddr(Conn) error {
	return errors.New("udpio: sharing a listener's address is supported on Linux only")
}

// SharedControl returns next: off Linux no address is shared.
func SharedControl(next func(network, address string, c syscall.RawConn) error) func(network, address string, c syscall.RawConn) error {
	return next
}

// QueueEmpty cannot tell off Linux.
func QueueEmpty(Conn) (empty, ok bool) { return false, false }
