package cli

import (
	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/compare"
	"github.com/wirebench/wirebench/internal/store"
)

// KindCompare is the "kind" of the compare command's JSON document.
const KindCompare = compare.Kind

// exitThreshold is compare's exit code when a run fails --fail-below or
// --fail-above (1 stays "could not compare").
const exitThreshold = 4

type compareFlags struct {
	dbFlag
	compare.Options
	json, csv bool
}

func newCompareCmd(e *env) *cobra.Command {
	f := &compareFlags{}
	cmd := &cobra.Command{
		Use:   "compare A B [C…]",
		Short: "Put saved runs side by side: each against the first as a ratio, with 95 % intervals, and a pass/fail verdict",
		Long: `Compare saved runs. Each RUN is a run id or labels such as link=usb,device=pic32
(the newest run carrying them all; add kind=test to pick a kind). The first
run is the baseline A; every other run B is set against it, metric by metric:
its value, B/A ("B is 88.4 % of A") and the difference B−A. Where both runs
hold repeated samples — a test's full intervals, a latency run's probes — the
difference and the ratio carry a 95 % confidence interval (Welch); intervals
of one test are not independent samples, so read it as a guide to the noise,
not a proof.

--fail-below 95% fails (exit code 4) when B/A of the verdict metric is below
95 % for any B; --fail-above 110% when it is above (for latency and loss,
where lower is better). The verdict metric is --metric, else the first
metric of the baseline (a test's throughput). A run that cannot be found or
compared exits 1.`,
		Example: `  wirebench compare link=eth link=usb
  wirebench compare 41 42 --fail-below 95%
  wirebench compare fw=1.3 fw=1.4 --metric jitter_ms --fail-above 120%
  wirebench compare 41 42 43 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("compare needs at least two runs: wirebench compare A B")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(e, f, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Metric, "metric", "", "compare only this metric (throughput, loss_percent, jitter_ms, rtt_mean_ms, …) and judge by it")
	fl.StringVar(&f.FailBelow, "fail-below", "", "exit 4 when B/A of the verdict metric is below `PERCENT` for any B (e.g. 95%)")
	fl.StringVar(&f.FailAbove, "fail-above", "", "exit 4 when B/A of the verdict metric is above `PERCENT` for any B (e.g. 110%)")
	fl.BoolVar(&f.json, "json", false, "print one JSON document (kind compare)")
	fl.BoolVar(&f.csv, "csv", false, "print CSV: one line per run and metric")
	f.dbFlag.register(cmd)
	return cmd
}

func runCompare(e *env, f *compareFlags, args []string) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	b, err := compare.NewBuilder(f.Options)
	if err != nil {
		return usageError{err}
	}
	sels := make([]store.Selector, len(args))
	for i, a := range args {
		if sels[i], err = store.ParseSelector(a); err != nil {
			return usageError{err}
		}
	}
	st, err := f.open(e.ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, sel := range sels {
		in, err := compareInput(e, st, sel)
		if err != nil {
			return err
		}
		if err := b.Add(in); err != nil {
			return err
		}
	}
	doc, err := b.Doc()
	if err != nil {
		return err
	}
	switch format {
	case formatJSON:
		err = writeJSONDoc(e.stdout, doc)
	case formatCSV:
		err = compare.WriteCSV(e.stdout, doc)
	default:
		err = compare.WriteText(e.stdout, doc)
	}
	if err != nil {
		return err
	}
	if doc.Verdict != nil && !doc.Verdict.Passed {
		return exitStatus{exitThreshold}
	}
	return nil
}

// compareInput finds the run sel names, and whether others matched too.
func compareInput(e *env, st store.Store, sel store.Selector) (compare.Input, error) {
	r, err := store.Find(e.ctx, st, sel)
	if err != nil {
		return compare.Input{}, err
	}
	return compare.Input{Selector: sel.Text, SelectedBy: sel.Filter.Labels, ID: r.ID, Kind: r.Kind, StartedAt: r.StartedAt,
		Labels: r.Labels, Target: r.Target, Summary: r.Summary, Result: r.Result, Ambiguous: store.Ambiguous(e.ctx, st, sel)}, nil
}
