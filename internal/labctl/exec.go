package labctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
)

// ExecIO is what Exec connects its command to.
type ExecIO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// SignalsTaken, when not nil, is called once Exec has taken over the
	// signals it passes on (execSignals), before the command starts.
	SignalsTaken func()
}

// Exec runs argv in host's namespace of lab name with stdio and returns
// its exit status: its exit code, or 128 + the signal that ended it, as a
// shell reports it. The error says why it could not run or be waited for.
//
// SIGINT, SIGTERM and SIGHUP sent to wirebench are passed on to the
// command, and Exec waits for it to end, so one `kill` (a script's,
// timeout's, a CI job's) stops both. Run from a terminal in the
// foreground, the command shares wirebench's process group and the
// terminal: Ctrl-C reaches it directly and is not passed on a second time.
// Elsewhere it gets a process group of its own, so a signal sent to
// wirebench's whole group reaches it once, through wirebench. When ctx
// ends (no signal came), the command gets SIGTERM.
func Exec(ctx context.Context, name, host string, argv []string, stdio ExecIO) (int, error) {
	ns := netlab.LabNamespace(name, host)
	nss, err := netlab.LabNamespaces(name)
	if err != nil {
		return 0, err
	}
	if !slices.Contains(nss, ns) {
		up := NameFlag(name)
		if host == "r" {
			up += " --model SPEC" // r exists only in a lab with a relay
		}
		return 0, fmt.Errorf("lab %s has no host %s (no namespace %s): start it with `wirebench lab up%s`", name, host, ns, up)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 0, fmt.Errorf("lab exec: %w", err)
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Stdin: stdio.Stdin, Stdout: stdio.Stdout, Stderr: stdio.Stderr, WaitDelay: time.Second}
	ownGroup := !foregroundTerminal()
	ownProcessGroup(cmd, ownGroup)
	// Catch the signals before the command starts: one that comes
	// between is passed on once it runs, not lost or fatal to wirebench.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, execSignals...)
	defer signal.Stop(sigs)
	if stdio.SignalsTaken != nil {
		stdio.SignalsTaken()
	}
	if err := netlab.StartIn(ns, cmd); err != nil {
		return 0, fmt.Errorf("lab exec %s in %s: %w", argv[0], ns, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	done, passed := ctx.Done(), false
	for {
		select {
		case s := <-sigs:
			if s == os.Interrupt && !ownGroup {
				continue // the terminal sent it to the command as well
			}
			_ = cmd.Process.Signal(s)
			passed = true
		case <-done:
			done = nil
			if !passed {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		case err := <-waited:
			return execStatus(argv[0], err)
		}
	}
}

// execSignals are the signals Exec passes on to its command.
var execSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// execStatus turns the command's end into its exit status: its exit code,
// or 128 + the signal that ended it, as a shell reports it.
func execStatus(name string, err error) (int, error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, fmt.Errorf("lab exec %s: %w", name, err)
}

// ExecArgs splits `lab exec`'s arguments, "HOST [--] COMMAND [ARG...]",
// into the host (a, b or r) and the command. Every error is a mistake in
// them.
func ExecArgs(args []string) (host string, argv []string, err error) {
	if len(args) >= 2 && args[1] == "--" {
		args = append([]string{args[0]}, args[2:]...) // "--" after the host: flags stop at the host, so cobra keeps it
	}
	if len(args) < 2 {
		return "", nil, errors.New("expected a host (a or b) and a command, like: lab exec b -- wirebench server")
	}
	if args[0] != "a" && args[0] != "b" && args[0] != "r" {
		return "", nil, fmt.Errorf("unknown host %q: want a or b (or r in a lab with --model or --wire exact)", args[0])
	}
	return args[0], args[1:], nil
}
