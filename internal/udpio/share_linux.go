package udpio

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// SharingSupported says whether ShareAddr and QueueEmpty work here: a
// socket connected to one peer can take that peer's datagrams off a
// listener bound to the same address.
const SharingSupported = true

// ShareAddr lets other sockets bind c's address and port (SO_REUSEADDR),
// so that a socket connected to one peer can take that peer's datagrams
// off c: Linux delivers a datagram to the bound socket that matches it
// best, and a connected one matches its peer's better than c does. Set it
// only once c is bound, so that binding c still fails while another
// socket holds the port.
func ShareAddr(c Conn) error {
	b, ok := c.(interface{ sock() *base })
	if !ok {
		return fmt.Errorf("udpio: sharing the address: not a socket of this package")
	}
	rc, err := b.sock().uc.SyscallConn()
	if err != nil {
		return fmt.Errorf("udpio: sharing the address: %w", err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1) }); err != nil {
		return fmt.Errorf("udpio: sharing the address: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("udpio: sharing the address (SO_REUSEADDR): %w", serr)
	}
	return nil
}

// SharedControl is a Control (Options.Control, net.Dialer.Control) that
// sets SO_REUSEADDR before the socket binds, so it may bind the address of
// a listener that ShareAddr opened up, then runs next (if set).
func SharedControl(next func(network, address string, c syscall.RawConn) error) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1) }); err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("SO_REUSEADDR: %w", serr)
		}
		if next != nil {
			return next(network, address, c)
		}
		return nil
	}
}

// QueueEmpty reports whether no datagram waits for c's reader: none in the
// kernel's receive queue (SIOCINQ) and, with GRO, none kept from a
// coalesced packet for the next ReadBatch. Call it on the reader goroutine
// only, between reads. ok is false when it cannot tell.
func QueueEmpty(c Conn) (empty, ok bool) {
	if bc, isBatch := c.(*batchConn); isBatch && bc.rx.gro && bc.rx.cur < bc.rx.got {
		return false, true
	}
	b, isOurs := c.(interface{ sock() *base })
	if !isOurs {
		return false, false
	}
	rc, err := b.sock().uc.SyscallConn()
	if err != nil {
		return false, false
	}
	n, ierr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil || ierr != nil {
		return false, false
	}
	return n == 0, true
}
