package labctl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
)

// readyWait is how long Up waits for a process it starts in the lab (a
// relay, the exact wire) to say it is ready.
const readyWait = 10 * time.Second

// startDetached starts argv in namespace ns in a session of its own, with
// stdout to reportPath and stderr to logPath, so that it outlives `lab up`,
// and waits until its log matches ready. It returns its PID and the match.
func startDetached(ctx context.Context, ns string, argv []string, logPath, reportPath string, ready *regexp.Regexp) (int, [][]byte, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, nil, err
	}
	defer logf.Close()
	repf, err := os.OpenFile(reportPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, nil, err
	}
	defer repf.Close()
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Stdout: repf, Stderr: logf}
	detach(cmd)
	if err := netlab.StartIn(ns, cmd); err != nil {
		return 0, nil, err
	}
	// Reap it if it ends while this process lives (at once on a failed
	// start; in a test that runs `lab up` in process, when `lab down` ends
	// it). After `lab up` exits, init adopts it.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.NewTimer(readyWait)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(logPath)
		if err != nil {
			return 0, nil, err
		}
		if m := ready.FindSubmatch(b); m != nil {
			return cmd.Process.Pid, m, nil
		}
		select {
		case err := <-done:
			b, _ := os.ReadFile(logPath)
			return 0, nil, fmt.Errorf("it ended (%v): %s", err, lastLine(b))
		case <-deadline.C:
			_ = cmd.Process.Kill()
			return 0, nil, fmt.Errorf("it did not start within %v: %s", readyWait, lastLine(b))
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			return 0, nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// lastLine returns the last non-empty line of b, or a note that b is empty.
func lastLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "no output"
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}
