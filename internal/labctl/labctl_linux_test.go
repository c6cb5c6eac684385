//go:build linux

package labctl

import (
	"os/exec"
	"syscall"
	"testing"
)

// TestExecStatus: a command's end becomes the status a shell reports: its
// exit code, or 128 + the signal that ended it.
func TestExecStatus(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for script, want := range map[string]int{"exit 0": 0, "exit 3": 3, "kill -TERM $$": 128 + int(syscall.SIGTERM)} {
		code, err := execStatus("sh", exec.Command("sh", "-c", script).Run())
		if err != nil || code != want {
			t.Errorf("sh -c %q: status %d, %v; want %d", script, code, err, want)
		}
	}
	if _, err := execStatus("x", exec.ErrWaitDelay); err == nil {
		t.Error("a wait that failed gave no error")
	}
}

// TestReadStatusOfNoLab: a lab that was never made is down, with nothing
// in it (no root needed: it only reads).
func TestReadStatusOfNoLab(t *testing.T) {
	s, err := ReadStatus("t_never_made")
	if err != nil {
		t.Fatal(err)
	}
	if s.State != StateDown || len(s.Namespaces) != 0 || s.Config != nil || s.StateFileError != "" || s.Namespaces == nil {
		t.Errorf("status %+v", s)
	}
}
