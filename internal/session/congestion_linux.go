package session

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// congestionControl returns a dialer Control function that sets the TCP
// congestion control algorithm (TCP_CONGESTION) before connecting.
func congestionControl(algo string) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, algo)
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			return fmt.Errorf("setting tcp congestion control %q (see net.ipv4.tcp_available_congestion_control): %w", algo, err)
		}
		return nil
	}
}
