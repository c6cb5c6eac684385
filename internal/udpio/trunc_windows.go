//go:build windows

package udpio

import (
	"errors"
	"golang.org/x/sys/windows"
)

// truncated reports whether the datagram was cut short: Windows returns
// WSAEMSGSIZE instead of a flag.
func truncated(_ int, err error) (bool, error) {
	if errors.Is(err, windows.WSAEMSGSIZE) {
		return true, nil
	}
	return false, err
}
