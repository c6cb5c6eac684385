//go:build linux

package cli

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestLabWireExact: `lab up --wire exact` starts the forwarder in r; a
// reaches b through it (ping), `lab status` shows its counters with the
// frames it forwarded each way, and `lab down` ends it with the lab.
func TestLabWireExact(t *testing.T) {
	const name = "t_wire"
	needLab(t, name)
	if _, err := exec.LookPath("ping"); err != nil {
		t.Skip("ping not installed")
	}
	out, _ := runLab(t, "lab", "up", "--name", name, "--medium", "eth100", "--wire", "exact")
	if !strings.Contains(out, "exact wire: a forwarder in r") {
		t.Fatalf("lab up output does not name the exact wire:\n%s", out)
	}
	runLab(t, "lab", "exec", "--name", name, "a", "--", "ping", "-c", "3", "-i", "0.2", "-W", "5", "198.18.0.2")
	s := labStatusJSON(t, name)
	if s.State != "up" || s.Config == nil || s.Config.Wire == nil {
		t.Fatalf("lab status: state %s, config %+v", s.State, s.Config)
	}
	// The counters are rewritten every second; three echoes and their
	// replies have crossed by the time the status after the next write is
	// read, so poll (up to 10 s) for them.
	for try := 0; ; try++ {
		fwd := map[string]uint64{}
		for _, d := range s.Wire {
			fwd[d.Name] = d.Frames
		}
		if fwd["a>b"] >= 3 && fwd["b>a"] >= 3 {
			t.Logf("wire counters: %v", s.Wire)
			break
		}
		if try == 100 {
			t.Fatalf("after 3 pings the wire's counters show %v, want at least 3 frames each way", s.Wire)
		}
		time.Sleep(100 * time.Millisecond)
		s = labStatusJSON(t, name)
	}
	pid := s.Config.Wire.PID
	down, _ := runLab(t, "lab", "down", "--name", name)
	if !strings.Contains(down, "ended processes") || strings.Contains(down, "warning") {
		t.Fatalf("lab down did not end the forwarder (pid %d) cleanly:\n%s", pid, down)
	}
}
