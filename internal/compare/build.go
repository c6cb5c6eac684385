package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// Options are the compare command's choices as typed: the verdict metric
// (--metric) and the thresholds (--fail-below, --fail-above, percentages
// such as "95%").
type Options struct {
	Metric    string
	FailBelow string
	FailAbove string
}

// Verdict is the threshold the options ask for, nil when none; an error
// names the flag the user mistyped.
func (o Options) Verdict() (*Verdict, error) {
	if o.FailBelow == "" && o.FailAbove == "" {
		return nil, nil
	}
	v := &Verdict{Metric: o.Metric, Passed: true}
	if o.FailBelow != "" {
		x, err := parsePercent("--fail-below", o.FailBelow)
		if err != nil {
			return nil, err
		}
		v.FailBelow = &x
	}
	if o.FailAbove != "" {
		x, err := parsePercent("--fail-above", o.FailAbove)
		if err != nil {
			return nil, err
		}
		v.FailAbove = &x
	}
	return v, nil
}

// parsePercent reads "95%" or "95" as 0.95.
func parsePercent(flag, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("invalid %s %q: want a percentage like 95%%", flag, s)
	}
	return v / 100, nil
}

// Input is one saved run to compare, as its store found it.
type Input struct {
	// Selector is the argument that named the run, as typed; SelectedBy
	// its labels (none for a run id).
	Selector   string
	SelectedBy map[string]string
	ID         int64
	Kind       string
	StartedAt  time.Time
	Labels     map[string]string
	Target     string
	Summary    string
	// Result is the run's saved result document.
	Result []byte
	// Ambiguous says the selector matched other runs too (the newest is
	// this one).
	Ambiguous bool
}

// Builder puts runs side by side as they are added: the first is the
// baseline A, every later one a run B set against it.
type Builder struct {
	metric  string
	verdict *Verdict
	doc     Doc
	metrics [][]Metric
}

// NewBuilder starts a comparison with the options' verdict (Verdict).
func NewBuilder(o Options) (*Builder, error) {
	v, err := o.Verdict()
	if err != nil {
		return nil, err
	}
	return &Builder{metric: o.Metric, verdict: v, doc: Doc{Schema: result.Schema, Kind: Kind, Warnings: []string{}}}, nil
}

// Add takes the next run's metrics (only --metric's, when given) and
// warns where its figures, its kind or its selector call for care.
func (b *Builder) Add(in Input) error {
	kind, ms, err := Metrics(in.Result)
	if err != nil {
		return fmt.Errorf("run %d: %w", in.ID, err)
	}
	if b.metric != "" {
		ms = pick(ms, b.metric)
		if len(ms) == 0 {
			return fmt.Errorf("run %d (%s) has no metric %q", in.ID, kind, b.metric)
		}
	}
	b.metrics = append(b.metrics, ms)
	b.warnOfRun(in)
	cr := DocRun{Selector: in.Selector, ID: in.ID, Kind: in.Kind, StartedAt: in.StartedAt, Labels: in.Labels,
		LabelsText: result.FormatLabels(in.Labels), Target: in.Target, Summary: in.Summary, SelectedBy: in.SelectedBy}
	if len(b.metrics) == 1 {
		b.doc.Baseline = cr
	} else {
		b.doc.Runs = append(b.doc.Runs, cr)
		if cr.Kind != b.doc.Baseline.Kind {
			b.warnf("run %d is a %s, the baseline run %d a %s: only the metrics both have are compared", cr.ID, cr.Kind, b.doc.Baseline.ID, b.doc.Baseline.Kind)
		}
		if cr.ID == b.doc.Baseline.ID {
			b.warnf("%q names the baseline run %d itself", in.Selector, cr.ID)
		}
	}
	if in.Ambiguous {
		// A selector names the newest match: say when others matched too,
		// so nobody compares a different run than they meant unawares.
		b.warnf("%q matches more than one run; the newest, %d, is used", in.Selector, in.ID)
	}
	return nil
}

// warnOfRun carries a run's own warnings over: a figure its own run did
// not trust is no firmer in a comparison.
func (b *Builder) warnOfRun(in Input) {
	var head struct {
		Warnings []string `json:"warnings"`
		Error    string   `json:"error"`
	}
	if json.Unmarshal(in.Result, &head) != nil {
		return
	}
	for _, w := range head.Warnings {
		b.warnf("run %d: %s", in.ID, w)
	}
	if head.Error != "" {
		b.warnf("run %d ended early (%s): its figures are partial", in.ID, head.Error)
	}
}

func (b *Builder) warnf(format string, args ...any) {
	b.doc.Warnings = append(b.doc.Warnings, fmt.Sprintf(format, args...))
}

// Doc names the runs, compares every run B with the baseline and judges
// the verdict, if one was asked for.
func (b *Builder) Doc() (*Doc, error) {
	doc := &b.doc
	NameRuns(doc)
	if len(b.metrics) == 0 || len(b.metrics[0]) == 0 {
		return nil, fmt.Errorf("the baseline run %d has no figures to compare", doc.Baseline.ID)
	}
	v := b.verdict
	if v != nil && v.Metric == "" {
		v.Metric = b.metrics[0][0].Name
	}
	for i := 1; i < len(b.metrics); i++ {
		diffs, onlyA, onlyB := Pair(b.metrics[0], b.metrics[i])
		c := Comparison{Run: doc.Runs[i-1].ID, Name: doc.Runs[i-1].Name, BaselineName: doc.Baseline.Name, Ratio: map[string]float64{}, Metrics: diffs, OnlyInBaseline: onlyA, OnlyInRun: onlyB}
		if c.Metrics == nil {
			c.Metrics = []Diff{}
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
	return doc, nil
}

// pick keeps the metrics named name.
func pick(ms []Metric, name string) []Metric {
	var out []Metric
	for _, m := range ms {
		if m.Name == name {
			out = append(out, m)
		}
	}
	return out
}
