//go:build !linux

package labctl

import "os/exec"

// foregroundTerminal reports false: labs exist only on Linux
// (netlab.StartIn fails first).
func foregroundTerminal() bool { return false }

// ownProcessGroup does nothing: labs exist only on Linux.
func ownProcessGroup(cmd *exec.Cmd, own bool) {}
