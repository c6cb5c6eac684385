package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/compare"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/units"
)

// KindCompare is the "kind" of the compare command's JSON document.
const KindCompare = "compare"

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

// compareRun is one run in the compare document.
type compareRun struct {
	Selector string `json:"selector"`
	ID       int64  `json:"id"`
	// Name is what the text calls the run: the labels it was selected
	// by, else those of its labels the other compared runs do not all
	// share, else "run N".
	Name      string            `json:"name"`
	Kind      string            `json:"kind"`
	StartedAt time.Time         `json:"started_at"`
	Labels    map[string]string `json:"labels"`
	// LabelsText is Labels as history prints them (k=v,k2=v2, sorted).
	LabelsText string `json:"labels_text"`
	Target     string `json:"target"`
	Summary    string `json:"summary"`
	// selectedBy are the labels of a label selector (none for an id).
	selectedBy map[string]string
}

// comparison is one run B against the baseline.
type comparison struct {
	Run int64 `json:"run"`
	// Name and BaselineName are the two runs' names (compareRun.Name).
	Name         string             `json:"name"`
	BaselineName string             `json:"baseline_name"`
	Ratio        map[string]float64 `json:"ratio"` // B/A per metric (where A is not 0)
	Metrics      []compare.Diff     `json:"metrics"`
	// OnlyInBaseline and OnlyInRun are metrics one side lacks.
	OnlyInBaseline []string `json:"only_in_baseline,omitempty"`
	OnlyInRun      []string `json:"only_in_run,omitempty"`
}

// verdict is the threshold's outcome.
type verdict struct {
	Metric    string   `json:"metric"`
	FailBelow *float64 `json:"fail_below,omitempty"`
	FailAbove *float64 `json:"fail_above,omitempty"`
	Passed    bool     `json:"passed"`
	Reasons   []string `json:"reasons,omitempty"`
}

type compareDoc struct {
	Schema      string       `json:"schema"`
	Kind        string       `json:"kind"`
	Baseline    compareRun   `json:"baseline"`
	Runs        []compareRun `json:"runs"`
	Comparisons []comparison `json:"comparisons"`
	Verdict     *verdict     `json:"verdict,omitempty"`
	Warnings    []string     `json:"warnings"`
}

func runCompare(e *env, f *compareFlags, args []string) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	var v *verdict
	if f.failBelow != "" || f.failAbove != "" {
		v = &verdict{Metric: f.metric, Passed: true}
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
	doc := compareDoc{Schema: result.Schema, Kind: KindCompare, Warnings: []string{}}
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
		cr := compareRun{Selector: sel.Text, ID: r.ID, Kind: r.Kind, StartedAt: r.StartedAt, Labels: r.Labels,
			LabelsText: store.FormatLabels(r.Labels), Target: r.Target, Summary: r.Summary, selectedBy: sel.Filter.Labels}
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
	nameRuns(&doc)
	if len(metrics[0]) == 0 {
		return fmt.Errorf("the baseline run %d has no figures to compare", doc.Baseline.ID)
	}
	if v != nil && v.Metric == "" {
		v.Metric = metrics[0][0].Name
	}
	for i := 1; i < len(metrics); i++ {
		diffs, onlyA, onlyB := compare.Pair(metrics[0], metrics[i])
		c := comparison{Run: doc.Runs[i-1].ID, Name: doc.Runs[i-1].Name, BaselineName: doc.Baseline.Name, Ratio: map[string]float64{}, Metrics: diffs, OnlyInBaseline: onlyA, OnlyInRun: onlyB}
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
			v.judge(c)
		}
	}
	doc.Verdict = v
	switch format {
	case formatJSON:
		err = writeJSONDoc(e.stdout, doc)
	case formatCSV:
		err = writeCompareCSV(e.stdout, doc)
	default:
		err = writeCompareText(e.stdout, doc)
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

// judge sets the verdict for one comparison.
func (v *verdict) judge(c comparison) {
	for _, d := range c.Metrics {
		if d.Name != v.Metric {
			continue
		}
		if d.Ratio == nil {
			v.Passed = false
			v.Reasons = append(v.Reasons, fmt.Sprintf("%s: the baseline's %s is 0, so B/A is undefined", c.who(), d.Name))
			return
		}
		r := *d.Ratio
		if v.FailBelow != nil && r < *v.FailBelow {
			v.Passed = false
			v.Reasons = append(v.Reasons, fmt.Sprintf("%s: %s is %s of the baseline's, below %s", c.who(), d.Name, pct(r), pct(*v.FailBelow)))
		}
		if v.FailAbove != nil && r > *v.FailAbove {
			v.Passed = false
			v.Reasons = append(v.Reasons, fmt.Sprintf("%s: %s is %s of the baseline's, above %s", c.who(), d.Name, pct(r), pct(*v.FailAbove)))
		}
		return
	}
	v.Passed = false
	v.Reasons = append(v.Reasons, fmt.Sprintf("%s has no %s to judge by", c.who(), v.Metric))
}

// who names the compared run for a sentence ("link=usb (run 13)").
func (c comparison) who() string { return compare.Who(c.Name, c.Run) }

// runName is "run N".
func runName(id int64) string { return compare.RunName(id) }

// nameRuns names every compared run as compare.Names does: by the labels
// it was selected by, else by those of its labels that tell it apart.
func nameRuns(doc *compareDoc) {
	all := append([]*compareRun{&doc.Baseline}, make([]*compareRun, len(doc.Runs))...)
	for i := range doc.Runs {
		all[i+1] = &doc.Runs[i]
	}
	refs := make([]compare.Run, len(all))
	for i, r := range all {
		refs[i] = compare.Run{ID: r.ID, Labels: r.Labels, SelectedBy: r.selectedBy}
	}
	for i, name := range compare.Names(refs) {
		all[i].Name = name
	}
}

// pct writes a ratio as a percentage.
func pct(r float64) string { return strconv.FormatFloat(100*r, 'f', 1, 64) + " %" }

// fmtValue writes a metric's value in its unit.
func fmtValue(v float64, unit string) string {
	switch unit {
	case "bit/s":
		return units.FormatBits(v)
	case "ms":
		return strconv.FormatFloat(v, 'f', 3, 64) + " ms"
	case "%":
		return strconv.FormatFloat(v, 'f', 3, 64) + " %"
	case "1/s":
		return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// fmtDiff writes B−A with its interval.
func fmtDiff(d compare.Diff) string {
	var s string
	if d.Unit == "bit/s" {
		s = signed(d.Difference/1e6, 2) + " Mbit/s"
		if d.DifferenceCI95 != nil {
			s += " ±" + strconv.FormatFloat(*d.DifferenceCI95/1e6, 'f', 2, 64)
		}
		return s
	}
	s = signed(d.Difference, 3)
	if d.DifferenceCI95 != nil {
		s += " ±" + strconv.FormatFloat(*d.DifferenceCI95, 'f', 3, 64)
	}
	if d.Unit != "count" && d.Unit != "" {
		s += " " + d.Unit
	}
	return s
}

func signed(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if v >= 0 {
		s = "+" + s
	}
	return s
}

func fmtRatio(d compare.Diff) string {
	if d.Ratio == nil {
		return "—"
	}
	if d.RatioCI95 == nil {
		return pct(*d.Ratio)
	}
	return strconv.FormatFloat(100**d.Ratio, 'f', 1, 64) + " ±" + strconv.FormatFloat(100**d.RatioCI95, 'f', 1, 64) + " %"
}

func describeRun(r compareRun) string {
	s := fmt.Sprintf("run %d (%s, %s, %s", r.ID, r.Kind, r.StartedAt.Format("2006-01-02 15:04:05"), r.Target)
	if len(r.Labels) > 0 {
		s += ", " + store.FormatLabels(r.Labels)
	}
	return s + ")"
}

func writeCompareText(w io.Writer, doc compareDoc) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\n", describeRun(doc.Baseline))
	for i, c := range doc.Comparisons {
		r := doc.Runs[i]
		fmt.Fprintf(&b, "\nB: %s\n", describeRun(r))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  METRIC\tA\tB\tB/A (95 % CI)\tB−A (95 % CI)")
		for _, d := range c.Metrics {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", d.Name, fmtValue(d.A, d.Unit), fmtValue(d.B, d.Unit), fmtRatio(d), fmtDiff(d))
		}
		_ = tw.Flush()
		if len(c.Metrics) > 0 && c.Metrics[0].Ratio != nil {
			d := c.Metrics[0]
			fmt.Fprintf(&b, "  %s\n", ratioSentence(r, doc.Baseline, *d.Ratio, d.Name))
		}
		for _, d := range c.Metrics {
			if d.NoCI != "" {
				fmt.Fprintf(&b, "  %s: no 95 %% interval: %s\n", d.Name, d.NoCI)
			}
		}
		if len(c.OnlyInBaseline)+len(c.OnlyInRun) > 0 {
			fmt.Fprintf(&b, "  not compared: only in A: %s; only in B: %s\n", listOrNone(c.OnlyInBaseline), listOrNone(c.OnlyInRun))
		}
	}
	for _, wng := range doc.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wng)
	}
	if v := doc.Verdict; v != nil {
		var limits []string
		if v.FailBelow != nil {
			limits = append(limits, "at least "+pct(*v.FailBelow))
		}
		if v.FailAbove != nil {
			limits = append(limits, "at most "+pct(*v.FailAbove))
		}
		if v.Passed {
			fmt.Fprintf(&b, "\nverdict: PASS (%s of the baseline's %s)\n", strings.Join(limits, " and "), v.Metric)
		} else {
			fmt.Fprintf(&b, "\nverdict: FAIL (%s of the baseline's %s)\n", strings.Join(limits, " and "), v.Metric)
			for _, r := range v.Reasons {
				fmt.Fprintf(&b, "  %s\n", r)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ratioSentence says B/A of the headline metric, naming the runs:
// "link=usb is 88.4 % of link=eth in throughput (run 13 vs run 12)", or
// "run 13 is 88.4 % of run 12 in throughput" for runs with no labels.
func ratioSentence(b, a compareRun, ratio float64, metric string) string {
	s := fmt.Sprintf("%s is %s of %s in %s", b.Name, pct(ratio), a.Name, metric)
	if b.Name != runName(b.ID) || a.Name != runName(a.ID) {
		s += fmt.Sprintf(" (run %d vs run %d)", b.ID, a.ID)
	}
	return s
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// writeCompareCSV writes one line per compared run and metric. The runs'
// names (as the text calls them) come last, after the columns older
// versions wrote, so that readers by position keep working; a name of
// several labels has commas and is quoted.
func writeCompareCSV(w io.Writer, doc compareDoc) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"baseline", "run", "metric", "unit", "a", "b", "ratio", "ratio_ci95", "difference", "difference_ci95", "baseline_name", "run_name"})
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return num(*p)
	}
	for _, c := range doc.Comparisons {
		for _, d := range c.Metrics {
			_ = cw.Write([]string{strconv.FormatInt(doc.Baseline.ID, 10), strconv.FormatInt(c.Run, 10), d.Name, d.Unit,
				num(d.A), num(d.B), opt(d.Ratio), opt(d.RatioCI95), num(d.Difference), opt(d.DifferenceCI95),
				c.BaselineName, c.Name})
		}
	}
	cw.Flush()
	return cw.Error()
}
