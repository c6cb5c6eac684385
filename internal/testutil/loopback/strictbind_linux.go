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
