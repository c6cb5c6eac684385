//go:build !linux

package proccpu

// Read returns ErrNotSupported: there is no /proc.
func Read(pid int) (Usage, error) { return Usage{}, ErrNotSupported }
