//go:build !unix && !windows

package udpio

// truncated cannot tell truncation on this platform.
func truncated(_ int, err error) (bool, error) { return false, err }
