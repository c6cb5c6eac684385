//go:build unix

package udpio

import "syscall"

// truncated reports whether recvmsg flagged the datagram as cut short.
func truncated(flags int, err error) (bool, error) {
	return flags&syscall.MSG_TRUNC != 0, err
}
