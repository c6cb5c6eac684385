//go:build !linux

package loopback

import "syscall"

// strictBind leaves the listener's options as Go sets them: the ports of
// FreePort are then checked as a listener binds, not as a client does.
func strictBind(_, _ string, _ syscall.RawConn) error { return nil }
