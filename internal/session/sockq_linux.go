package session

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// QueuedBytes returns how many received bytes wait unread in c's socket
// (SIOCINQ), 0 when that cannot be read.
func QueuedBytes(c net.Conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
	return n
}
