//go:build linux

package labctl

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// foregroundTerminal reports whether wirebench runs in the foreground of
// the terminal on its standard input: then Ctrl-C and the terminal's other
// signals reach every process in its process group.
func foregroundTerminal() bool {
	pgrp, err := unix.IoctlGetInt(int(os.Stdin.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == syscall.Getpgrp()
}

// ownProcessGroup makes cmd start in a process group of its own when own
// is set (and in wirebench's otherwise).
func ownProcessGroup(cmd *exec.Cmd, own bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: own}
}
