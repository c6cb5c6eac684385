//go:build !linux

package loopback

import "syscall"

// strictBind leaves the listener's options as Go sets them: the ports of
// FreePort are then checked as a listener binds, not as a client does.
func strictBind(_, _ string, _ syscall.RawConn) error { return nil }

// NoFork does nothing here: elsewhere net takes syscall.ForkLock itself
// when it opens a socket, and holding it around that could deadlock. A
// probe socket may then live on in a child forked meanwhile, until the
// child execs.
func NoFork() (release func()) { return func() {} }
