//go:build !linux

package labctl

import "os/exec"

// detach does nothing: labs exist only on Linux (netlab.StartIn fails first).
func detach(cmd *exec.Cmd) {}
