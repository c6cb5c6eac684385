package loopback

import "syscall"

// strictBind clears SO_REUSEADDR before a listener's bind, so that the
// bind fails as a client's bind to a given port does (a client sets no
// SO_REUSEADDR) on a port that a closed connection still holds in
// TIME_WAIT: Go's listeners set it, and bind over such a port.
func strictBind(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 0)
	}); err != nil {
		return err
	}
	return serr
}

// NoFork keeps this process from forking until the function it returns is
// called, so that sockets opened and closed meanwhile (a probe of whether
// a port is free) are not copied into a child, where they would live on
// until the child execs and keep the port taken. It holds
// syscall.ForkLock for reading, as os/exec takes it for writing around a
// fork. Only for short stretches that open sockets with net (on Linux,
// net opens them close-on-exec without taking the lock itself).
func NoFork() (release func()) {
	syscall.ForkLock.RLock()
	return syscall.ForkLock.RUnlock
}
