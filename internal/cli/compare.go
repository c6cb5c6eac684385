package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/compare"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
)

// KindCompare is the "kind" of the compare command's JSON document.
const KindCompare = compare.Kind

// exitThreshold is compare's exit code when a run fails --fail-below or
// --fail-above (1 stays "could not compare").
const exitThreshold = 4

type compareFlags struct {
	dbFlag
	metric    string
	failBelow string
	failAbove string
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
	fl.StringVar(&f.metric, "metric", "", "compare only this metric (throughput, loss_percent, jitter_ms, rtt_mean_ms, …) and judge by it")
	fl.StringVar(&f.failBelow, "fail-below", "", "exit 4 when B/A of the verdict metric is below `PERCENT` for any B (e.g. 95%)")
	fl.StringVar(&f.failAbove, "fail-above", "", "exit 4 when B/A of the verdict metric is above `PERCENT` for any B (e.g. 110%)")
	fl.BoolVar(&f.json, "json", false, "print one JSON document (kind compare)")
	fl.BoolVar(&f.csv, "csv", false, "print CSV: one line per run and metric")
	f.dbFlag.register(cmd)
	return cmd
}

// parsePercent reads "95%" or "95" as 0.95.
func parsePercent(flag, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, usagef("invalid %s %q: want a percentage like 95%%", flag, s)
	}
	return v / 100, nil
}

func runCompare(e *env, f *compareFlags, args []string) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	var v *compare.Verdict
	if f.failBelow != "" || f.failAbove != "" {
		v = &compare.Verdict{Metric: f.metric, Passed: true}
		if f.failBelow != "" {
			x, err := parsePercent("--fail-below", f.failBelow)
			if err != nil {
				return err
			}
			v.FailBelow = &x
		}
		if f.failAbove != "" {
			x, err := parsePercent("--fail-above", f.failAbove)
			if err != nil {
				return err
			}
			v.FailAbove = &x
		}
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
	doc := compare.Doc{Schema: result.Schema, Kind: compare.Kind, Warnings: []string{}}
	metrics := make([][]compare.Metric, len(sels))
	for i, sel := range sels {
		r, err := store.Find(e.ctx, st, sel)
		if err != nil {
			return err
		}
		kind, ms, err := compare.Metrics(r.Result)
		if err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		if f.metric != "" {
			ms = pick(ms, f.metric)
			if len(ms) == 0 {
				return fmt.Errorf("run %d (%s) has no metric %q", r.ID, kind, f.metric)
			}
		}
		metrics[i] = ms
		var head struct {
			Warnings []string `json:"warnings"`
			Error    string   `json:"error"`
		}
		if json.Unmarshal(r.Result, &head) == nil {
			// A figure its own run did not trust is no firmer in a comparison.
			for _, w := range head.Warnings {
				doc.Warnings = append(doc.Warnings, fmt.Sprintf("run %d: %s", r.ID, w))
			}
			if head.Error != "" {
				doc.Warnings = append(doc.Warnings, fmt.Sprintf("run %d ended early (%s): its figures are partial", r.ID, head.Error))
			}
		}
		cr := compare.DocRun{Selector: sel.Text, ID: r.ID, Kind: r.Kind, StartedAt: r.StartedAt, Labels: r.Labels,
			LabelsText: result.FormatLabels(r.Labels), Target: r.Target, Summary: r.Summary, SelectedBy: sel.Filter.Labels}
		if i == 0 {
			doc.Baseline = cr
		} else {
			doc.Runs = append(doc.Runs, cr)
			if cr.Kind != doc.Baseline.Kind {
				doc.Warnings = append(doc.Warnings, fmt.Sprintf("run %d is a %s, the baseline run %d a %s: only the metrics both have are compared", cr.ID, cr.Kind, doc.Baseline.ID, doc.Baseline.Kind))
			}
			if cr.ID == doc.Baseline.ID {
				doc.Warnings = append(doc.Warnings, fmt.Sprintf("%q names the baseline run %d itself", sel.Text, cr.ID))
			}
		}
		if sel.ID == 0 {
			// A selector names the newest match: say when others matched too,
			// so nobody compares a different run than they meant unawares.
			f := sel.Filter
			f.Limit = 2
			if more, err := st.List(e.ctx, f); err == nil && len(more) > 1 {
				doc.Warnings = append(doc.Warnings, fmt.Sprintf("%q matches more than one run; the newest, %d, is used", sel.Text, r.ID))
			}
		}
	}
	compare.NameRuns(&doc)
	if len(metrics[0]) == 0 {
		return fmt.Errorf("the baseline run %d has no figures to compare", doc.Baseline.ID)
	}
	if v != nil && v.Metric == "" {
		v.Metric = metrics[0][0].Name
	}
	for i := 1; i < len(metrics); i++ {
		diffs, onlyA, onlyB := compare.Pair(metrics[0], metrics[i])
		c := compare.Comparison{Run: doc.Runs[i-1].ID, Name: doc.Runs[i-1].Name, BaselineName: doc.Baseline.Name, Ratio: map[string]float64{}, Metrics: diffs, OnlyInBaseline: onlyA, OnlyInRun: onlyB}
		if c.Metrics == nil {
			c.Metrics = []compare.Diff{}
		}
		for _, d := range diffs {
			if d.Ratio != nil {
				c.Ratio[d.Name] = *d.Ratio
			}
		}
		doc.Comparisons = append(doc.Comparisons, c)
		if v != nil {
			v.Judge(c)
		}
	}
	doc.Verdict = v
	switch format {
	case formatJSON:
		err = writeJSONDoc(e.stdout, doc)
	case formatCSV:
		err = compare.WriteCSV(e.stdout, &doc)
	default:
		err = compare.WriteText(e.stdout, &doc)
	}
	if err != nil {
		return err
	}
	if v != nil && !v.Passed {
		return exitStatus{exitThreshold}
	}
	return nil
}

// pick keeps the metrics named name.
func pick(ms []compare.Metric, name string) []compare.Metric {
	var out []compare.Metric
	for _, m := range ms {
		if m.Name == name {
			out = append(out, m)
		}
	}
	return out
}
