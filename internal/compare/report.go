package compare

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// Kind is the "kind" of the compare command's JSON document.
const Kind = "compare"

// DocRun is one run in the compare document.
type DocRun struct {
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
	// SelectedBy are the labels of a label selector (none for an id);
	// not in the JSON.
	SelectedBy map[string]string `json:"-"`
}

// Comparison is one run B against the baseline.
type Comparison struct {
	Run int64 `json:"run"`
	// Name and BaselineName are the two runs' names (DocRun.Name).
	Name         string             `json:"name"`
	BaselineName string             `json:"baseline_name"`
	Ratio        map[string]float64 `json:"ratio"` // B/A per metric (where A is not 0)
	Metrics      []Diff             `json:"metrics"`
	// OnlyInBaseline and OnlyInRun are metrics one side lacks.
	OnlyInBaseline []string `json:"only_in_baseline,omitempty"`
	OnlyInRun      []string `json:"only_in_run,omitempty"`
}

// Verdict is the outcome of a threshold on one metric's B/A: FailBelow
// and FailAbove are ratios (0.95 for 95 %).
type Verdict struct {
	Metric    string   `json:"metric"`
	FailBelow *float64 `json:"fail_below,omitempty"`
	FailAbove *float64 `json:"fail_above,omitempty"`
	Passed    bool     `json:"passed"`
	Reasons   []string `json:"reasons,omitempty"`
}

// Doc is the compare command's JSON document: the baseline run A, the
// runs B compared with it, and the verdict when a threshold was given.
type Doc struct {
	Schema      string       `json:"schema"`
	Kind        string       `json:"kind"`
	Baseline    DocRun       `json:"baseline"`
	Runs        []DocRun     `json:"runs"`
	Comparisons []Comparison `json:"comparisons"`
	Verdict     *Verdict     `json:"verdict,omitempty"`
	Warnings    []string     `json:"warnings"`
}

// Judge records in v how comparison c fares against its threshold.
func (v *Verdict) Judge(c Comparison) {
	for _, d := range c.Metrics {
		if d.Name != v.Metric {
			continue
		}
		if d.Ratio == nil {
			v.Passed = false
			why := fmt.Sprintf("the baseline's %s is 0, so B/A is undefined", d.Name)
			if d.Bounded != "" {
				why = d.Name + ": " + d.Bounded
			}
			v.Reasons = append(v.Reasons, c.who()+": "+why)
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
func (c Comparison) who() string { return Who(c.Name, c.Run) }

// NameRuns names every compared run as Names does: by the labels
// it was selected by, else by those of its labels that tell it apart.
func NameRuns(doc *Doc) {
	all := append([]*DocRun{&doc.Baseline}, make([]*DocRun, len(doc.Runs))...)
	for i := range doc.Runs {
		all[i+1] = &doc.Runs[i]
	}
	refs := make([]Run, len(all))
	for i, r := range all {
		refs[i] = Run{ID: r.ID, Labels: r.Labels, SelectedBy: r.SelectedBy}
	}
	for i, name := range Names(refs) {
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

// boundOr writes a figure that is only a bound as its bound ("≥ 32"),
// any other in its unit.
func boundOr(bound string, v float64, unit string) string {
	if bound == "" {
		return fmtValue(v, unit)
	}
	return strings.NewReplacer(">= ", "≥ ", "<= ", "≤ ", "-", "–").Replace(bound) + " (bound)"
}

// fmtDiff writes B−A with its interval ("—" where a figure is a bound).
func fmtDiff(d Diff) string {
	if d.ABound != "" || d.BBound != "" {
		return "—"
	}
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

func fmtRatio(d Diff) string {
	if d.Ratio == nil {
		return "—"
	}
	if d.RatioCI95 == nil {
		return pct(*d.Ratio)
	}
	return strconv.FormatFloat(100**d.Ratio, 'f', 1, 64) + " ±" + strconv.FormatFloat(100**d.RatioCI95, 'f', 1, 64) + " %"
}

func describeRun(r DocRun) string {
	s := fmt.Sprintf("run %d (%s, %s, %s", r.ID, r.Kind, r.StartedAt.Format("2006-01-02 15:04:05"), r.Target)
	if len(r.Labels) > 0 {
		s += ", " + result.FormatLabels(r.Labels)
	}
	return s + ")"
}

// WriteText prints the comparison: each run B against A, a row per
// metric, the headline ratio in a sentence, then warnings and the verdict.
func WriteText(w io.Writer, doc *Doc) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\n", describeRun(doc.Baseline))
	for i, c := range doc.Comparisons {
		r := doc.Runs[i]
		fmt.Fprintf(&b, "\nB: %s\n", describeRun(r))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  METRIC\tA\tB\tB/A (95 % CI)\tB−A (95 % CI)")
		for _, d := range c.Metrics {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", d.Name, boundOr(d.ABound, d.A, d.Unit), boundOr(d.BBound, d.B, d.Unit), fmtRatio(d), fmtDiff(d))
		}
		_ = tw.Flush()
		if len(c.Metrics) > 0 && c.Metrics[0].Ratio != nil {
			d := c.Metrics[0]
			fmt.Fprintf(&b, "  %s\n", ratioSentence(r, doc.Baseline, *d.Ratio, d.Name))
		}
		for _, d := range c.Metrics {
			if d.Bounded != "" {
				fmt.Fprintf(&b, "  %s: %s\n", d.Name, d.Bounded)
			}
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
func ratioSentence(b, a DocRun, ratio float64, metric string) string {
	s := fmt.Sprintf("%s is %s of %s in %s", b.Name, pct(ratio), a.Name, metric)
	if b.Name != RunName(b.ID) || a.Name != RunName(a.ID) {
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

// WriteCSV writes one line per compared run and metric. The runs'
// names (as the text calls them) and the bounds come last, after the
// columns older versions wrote, so that readers by position keep working;
// a name of several labels has commas and is quoted. Where a figure is
// only a bound (a_bound, b_bound), a or b is the bound's end and the
// difference is empty, as the ratio is.
func WriteCSV(w io.Writer, doc *Doc) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"baseline", "run", "metric", "unit", "a", "b", "ratio", "ratio_ci95", "difference", "difference_ci95", "baseline_name", "run_name", "a_bound", "b_bound"})
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return num(*p)
	}
	for _, c := range doc.Comparisons {
		for _, d := range c.Metrics {
			diff := num(d.Difference)
			if d.ABound != "" || d.BBound != "" {
				diff = ""
			}
			_ = cw.Write([]string{strconv.FormatInt(doc.Baseline.ID, 10), strconv.FormatInt(c.Run, 10), d.Name, d.Unit,
				num(d.A), num(d.B), opt(d.Ratio), opt(d.RatioCI95), diff, opt(d.DifferenceCI95),
				c.BaselineName, c.Name, d.ABound, d.BBound})
		}
	}
	cw.Flush()
	return cw.Error()
}
