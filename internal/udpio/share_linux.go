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

// ShareAddr makes c, a listener opened with SharedControl, the one socket
// of its SO_REUSEPORT group that takes datagrams no connected member
// matches: a steering program (SO_ATTACH_REUSEPORT_CBPF) that always picks
// the group's first socket, c. A socket that joins the group (SharedControl
// too, on the same address) and connects to one peer then takes that
// peer's datagrams, since Linux prefers a connected socket that matches;
// before its connect it takes none, where without the program it would
// take a share of every peer's.
func ShareAddr(c Conn) error {
	b, ok := c.(interface{ sock() *base })
	if !ok {
		return fmt.Errorf("udpio: sharing the address: not a socket of this package")
	}
	rc, err := b.sock().uc.SyscallConn()
	if err != nil {
		return fmt.Errorf("udpio: sharing the address: %w", err)
	}
	first := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
	prog := unix.SockFprog{Len: uint16(len(first)), Filter: &first[0]}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF, &prog)
	}); err != nil {
		return fmt.Errorf("udpio: sharing the address: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("udpio: sharing the address (SO_ATTACH_REUSEPORT_CBPF): %w", serr)
	}
	return nil
}

// SharedControl is a Control (Options.Control, net.Dialer.Control) that
// sets SO_REUSEPORT before the socket binds, so that sockets of this
// process on one address form a group (see ShareAddr), then runs next
// (if set). A socket bound without it still gets EADDRINUSE.
func SharedControl(next func(network, address string, c syscall.RawConn) error) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("SO_REUSEPORT: %w", serr)
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
