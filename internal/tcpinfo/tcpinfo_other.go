//go:build !linux

package tcpinfo

func read(uintptr) (Info, error) { return Info{}, ErrUnsupported }
