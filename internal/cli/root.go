// Package cli is wirebench's command line: the subcommand table, flags
// turned into config structs, signals turned into context cancellation,
// output format choice and exit codes. Business logic lives in the packages
// it calls; nothing below this package parses flags or prints to a terminal.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/diagnose"
	"github.com/wirebench/wirebench/internal/docgen"
	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/iperfargs"
	"github.com/wirebench/wirebench/internal/units"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the measurement could not be made or was cut short
	exitUsage   = 2 // the command line was wrong
	exitSignal  = 3 // a second interrupt: stop without waiting
)

// env carries what every subcommand needs from the outside world.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	// signalsTaken, when not nil, is Main's: a command that handles
	// SIGINT and SIGTERM itself (lab exec passes them on) sets it, and
	// Main's handler then stands aside.
	signalsTaken *atomic.Bool
}

// exitStatus carries a command's own exit code out of `lab exec` (and
// check's and compare's verdicts); runWith returns it as wirebench's exit
// code without printing anything.
type exitStatus struct{ code int }

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError marks an error in what the user typed; it exits with code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Main runs wirebench with the given arguments (without the program name)
// and returns the process exit code. The first SIGINT or SIGTERM cancels the
// running test, which then reports what it measured so far; a second one
// exits at once with code 3. `lab exec` takes the signals over and passes
// them to its command instead.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	taken := new(atomic.Bool)
	go func() {
		if !nextSignal(sigs, ctx.Done(), taken) {
			return
		}
		cancel()
		late, stop := context.WithTimeout(context.Background(), 10*time.Minute)
		defer stop()
		if nextSignal(sigs, late.Done(), taken) {
			fmt.Fprintln(stderr, "wirebench: second interrupt, exiting")
			os.Exit(exitSignal)
		}
	}()
	return runWith(ctx, args, stdout, stderr, taken)
}

// nextSignal waits for a signal on sigs that no command has taken over
// (taken), and reports whether one came before done.
func nextSignal(sigs <-chan os.Signal, done <-chan struct{}, taken *atomic.Bool) bool {
	for {
		select {
		case <-sigs:
			if !taken.Load() {
				return true
			}
		case <-done:
			return false
		}
	}
}

// run is Main without signal handling, for tests.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, stdout, stderr, nil)
}

// runWith is run with Main's signal handler's switch (nil without one).
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, signalsTaken *atomic.Bool) int {
	out := &errWriter{w: stdout}
	e := &env{ctx: ctx, stdout: out, stderr: stderr, signalsTaken: signalsTaken}
	root := newRootCmd(e)
	root.SetArgs(joinOptionalValues(iperfargs.Rewrite(args)))
	err := root.ExecuteContext(ctx)
	if err == nil {
		err = out.firstErr()
		if err == nil {
			return exitOK
		}
		err = fmt.Errorf("writing output: %w", err)
	}
	var es exitStatus // `lab exec`: the command's own exit code, already reported by it
	if errors.As(err, &es) {
		return es.code
	}
	fmt.Fprintf(stderr, "wirebench: %v\n", err)
	var ue usageError
	var unsupported *dut.UnsupportedError // a test the device cannot run, found while running
	// cobra's own "unknown command" error for a mistyped subcommand is a
	// usage error too.
	if errors.As(err, &ue) || errors.As(err, &unsupported) || strings.HasPrefix(err.Error(), "unknown command ") {
		return exitUsage
	}
	return exitFailure
}

func newRootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "wirebench",
		Short: "Measure throughput, loss, jitter and latency of devices and links",
		Long: `wirebench measures the network performance of devices and links, speaking the
iperf dialect the device already runs (iperf2 old and new, zperf, lwiperf,
ESP-IDF), and explains every result against the line rate of the medium.

iperf habits work too: "wirebench -s" is "wirebench server", "wirebench -v" (or
--version) is "wirebench version", and "wirebench -c HOST -u -b 100M -t 60" is
"wirebench client HOST -u -b 100M -t 60".`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(commands(e)...)
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	}
	return root
}

// commands is the subcommand table.
func commands(e *env) []*cobra.Command {
	return []*cobra.Command{
		newClientCmd(e),
		newServerCmd(e),
		newCalcCmd(e),
		newPingCmd(e),
		newLatencyCmd(e),
		newSweepCmd(e),
		diagnose.NewCommand(func(err error) error { return usageError{err} }),
		newRFC2544Cmd(e),
		newMatrixCmd(e),
		newReportCmd(e),
		newWebCmd(e),
		newProbeCmd(e),
		newReflectCmd(e),
		newRelayCmd(e),
		newLoopbackCmd(e),
		newLabCmd(e),
		newHistoryCmd(e),
		newShowCmd(e),
		newCompareCmd(e),
		newCheckCmd(e),
		newPSchedulerCmd(e),
		newVersionCmd(e),
		docgen.Command(), // hidden: the man pages and completions scripts/release packages
	}
}

// exactArgs is cobra.ExactArgs returning a usage error; with no argument
// where "one HOST" is expected it says the host is missing.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 && what == "one HOST" {
			return usagef("a host is missing: wirebench %s HOST", cmd.Name())
		}
		if len(args) != n {
			return usagef("expected %s, got %s", what, units.Plural(len(args), "argument"))
		}
		return nil
	}
}
