//go:build linux

package labctl

import (
	"os/exec"
	"syscall"
)

// detach makes cmd start in a session of its own, so that it outlives the
// command that started it and no terminal signal (Ctrl-C, hangup) reaches it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
