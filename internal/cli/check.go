package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/check"
)

type checkFlags struct {
	dbFlag
	junit, markdown string
	baseline        string
	updateBaseline  bool
}

func newCheckCmd(e *env) *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check PLAN",
		Short: "Run a plan of measurements and gate on its criteria: absolute bounds and ratios to a baseline run (for CI)",
		Long: `Run the steps of PLAN (a YAML file, docs/ci.md) one after the other — each a
wirebench client, matrix, sweep, ping or rfc2544 command with its own
arguments — save each run in the results store labelled with the plan's
labels, plan=NAME and step=NAME, and judge each criterion on a figure of the
step's JSON document: an absolute bound ("receiver.bits_per_second >= 90M",
a matrix cell's "udp.upload.bits_per_second >= 90M", "loss_percent <= 0.1")
or a share of the same figure of the baseline run
("receiver.bits_per_second >= 95% of baseline"). The baseline is the newest run carrying the step's labels and
baseline=true (or baseline=NAME with --baseline NAME); --update-baseline puts
that label on this invocation's runs. A relative criterion without a baseline
is skipped, and says so.

Exit codes: 0 every criterion passed (or was skipped), 4 a criterion failed,
1 a step could not run, 2 the plan is wrong (including a figure its document
does not have: the error names the valid ones near it).`,
		Example: `  wirebench check ci/link.yaml --junit report.xml --markdown summary.md
  wirebench check ci/link.yaml --update-baseline            # these runs become the baseline
  wirebench check ci/link.yaml --baseline v1.4 --db postgres://ci@db/bench`,
		Args: exactArgs(1, "one PLAN file"),
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(e, f, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.junit, "junit", "", "also write the verdicts as JUnit XML to `FILE` (one test case per criterion)")
	fl.StringVar(&f.markdown, "markdown", "", "also write the verdicts as a Markdown table to `FILE` (for a merge request)")
	fl.StringVar(&f.baseline, "baseline", "true", "the baseline to compare with (and to set with --update-baseline): runs labelled baseline=`NAME`")
	fl.BoolVar(&f.updateBaseline, "update-baseline", false, "label this invocation's runs baseline=NAME (--baseline), so later checks compare with them")
	f.dbFlag.register(cmd)
	return cmd
}

func runCheck(e *env, f *checkFlags, planPath string) error {
	if f.baseline == "" {
		return usagef("--baseline needs a name (the default is true)")
	}
	plan, err := check.LoadPlan(planPath)
	if err != nil {
		return usageError{err}
	}
	st, err := f.open(e.ctx)
	if err != nil {
		return fmt.Errorf("opening the results store for the baselines: %w", err)
	}
	defer st.Close()
	opts := check.Options{
		Run: func(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
			return runWith(ctx, argv, stdout, stderr, e.signalsTaken)
		},
		DB: f.db, Store: st, Baseline: f.baseline, UpdateBaseline: f.updateBaseline, Log: e.stderr,
	}
	rep, err := check.Run(e.ctx, plan, opts)
	if err != nil {
		if errors.Is(err, check.ErrPlan) {
			return usageError{err}
		}
		return err
	}
	if err := rep.WriteText(e.stdout); err != nil {
		return err
	}
	if err := rep.WriteFiles(f.junit, f.markdown); err != nil {
		return err
	}
	if code := rep.ExitCode(); code != exitOK {
		return exitStatus{code}
	}
	return nil
}
