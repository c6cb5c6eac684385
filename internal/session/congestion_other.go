//go:build !linux

package session

import (
	"fmt"
	"syscall"
)

// congestionControl refuses: choosing the congestion control per socket is
// only implemented on Linux.
func congestionControl(algo string) func(network, address string, c syscall.RawConn) error {
	return func(string, string, syscall.RawConn) error {
		return fmt.Errorf("choosing the tcp congestion control (%q) is only supported on linux", algo)
	}
}
