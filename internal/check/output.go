package check

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/units"
)

// formatFigure writes a figure in its unit where the path says it: bit
// rates as "95.7 Mbits/sec", the rest as a plain number.
func formatFigure(path string, v float64) string {
	k := last(path)
	if k == "bits_per_second" || strings.HasSuffix(k, "_bps") {
		return units.FormatBits(v)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// Line is the one-line summary of a verdict.
func (v Verdict) Line() string {
	c := v.Criterion
	var b strings.Builder
	if v.ValueText != "" {
		fmt.Fprintf(&b, "%-5s %s: %s: a bound, not a result: %s", v.Status, v.Step, c.Path, v.ValueText)
	} else {
		fmt.Fprintf(&b, "%-5s %s: %s = %s", v.Status, v.Step, c.Path, formatFigure(c.Path, v.Value))
	}
	switch {
	case v.Status == Error && v.Value == 0 && v.BaselineID == 0 && v.ValueText == "":
		b.Reset()
		fmt.Fprintf(&b, "%-5s %s: %s", v.Status, v.Step, c.Text)
	case !c.Relative:
		fmt.Fprintf(&b, ", want %s %s", c.Op, formatFigure(c.Path, c.Value))
	case v.BaselineID == 0:
		fmt.Fprintf(&b, ", want %s %s %% of baseline", c.Op, c.Percent())
	default:
		fmt.Fprintf(&b, ", %s of baseline %s (run %d)", ratioText(v), formatFigure(c.Path, v.Baseline), v.BaselineID)
		fmt.Fprintf(&b, ", want %s %s %% (%s)", c.Op, c.Percent(), formatFigure(c.Path, v.Bound))
	}
	if v.RunID > 0 {
		fmt.Fprintf(&b, " [run %d]", v.RunID)
	}
	if v.Note != "" {
		b.WriteString("; " + v.Note)
	}
	return b.String()
}

func ratioText(v Verdict) string {
	if v.Ratio == nil {
		return "n/a"
	}
	s := pct(100**v.Ratio) + " %"
	if v.RatioCI95 != nil {
		s += " (95 % interval ±" + pct(100**v.RatioCI95) + ")"
	}
	return s
}

// pct writes a percentage with one decimal, or three significant digits
// below 1 so a small share does not read as 0.
func pct(p float64) string {
	if p != 0 && p > -1 && p < 1 {
		return strconv.FormatFloat(p, 'g', 3, 64)
	}
	return strconv.FormatFloat(p, 'f', 1, 64)
}

// WriteText writes one line per criterion and a closing summary.
func (r *Report) WriteText(w io.Writer) error {
	for _, v := range r.Verdicts {
		if _, err := fmt.Fprintln(w, v.Line()); err != nil {
			return err
		}
	}
	n := r.counts()
	_, err := fmt.Fprintf(w, "check %s: %d passed, %d failed, %d skipped, %d errors (exit %d)\n",
		r.Plan, n[Pass], n[Fail], n[Skip], n[Error], r.ExitCode())
	return err
}

func (r *Report) counts() map[string]int {
	n := map[string]int{}
	for _, v := range r.Verdicts {
		n[v.Status]++
	}
	return n
}

// JUnit XML: the subset GitLab, GitHub test reporters and Jenkins read.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: one test suite for the plan,
// one test case per criterion (named "STEP: CRITERION"), a failure's
// message naming this run's figure, the bound, and the baseline's figure
// and run id.
func (r *Report) WriteJUnit(w io.Writer) error {
	n := r.counts()
	s := junitSuite{Name: r.Plan, Tests: len(r.Verdicts), Failures: n[Fail], Errors: n[Error], Skipped: n[Skip],
		Time: strconv.FormatFloat(r.Seconds, 'f', 3, 64)}
	for _, v := range r.Verdicts {
		c := junitCase{Name: v.Step + ": " + v.Criterion.Text, Classname: r.Plan + "." + v.Step,
			Time: strconv.FormatFloat(v.Seconds, 'f', 3, 64), SystemOut: v.Line()}
		p := &junitProblem{Message: v.Line(), Text: v.Line()}
		switch v.Status {
		case Fail:
			p.Type = "criterion"
			c.Failure = p
		case Error:
			p.Type = "step"
			c.Error = p
		case Skip:
			c.Skipped = &junitProblem{Message: v.Note}
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteMarkdown writes the report as a Markdown table for a merge request.
func (r *Report) WriteMarkdown(w io.Writer) error {
	n := r.counts()
	head := "passed"
	if r.ExitCode() != ExitPass {
		head = "**failed**"
	}
	fmt.Fprintf(w, "### wirebench check `%s`: %s\n\n", mdEscape(r.Plan), head)
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped, %d errors\n\n", n[Pass], n[Fail], n[Skip], n[Error])
	fmt.Fprintln(w, "| | step | figure | this run | bound | baseline | note |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, v := range r.Verdicts {
		c := v.Criterion
		value, bound, base := "", c.Op+" "+formatFigure(c.Path, c.Value), ""
		switch {
		case v.ValueText != "":
			value = "a bound, not a result: " + v.ValueText
		case v.Status != Error || v.RunID != 0:
			value = formatFigure(c.Path, v.Value)
		}
		if value != "" {
			if v.RunID > 0 {
				value += fmt.Sprintf(" (run %d)", v.RunID)
			}
		}
		if c.Relative {
			bound = fmt.Sprintf("%s %s %% of baseline", c.Op, c.Percent())
			if v.BaselineID > 0 {
				bound += " = " + formatFigure(c.Path, v.Bound)
				base = fmt.Sprintf("%s (run %d), ratio %s", formatFigure(c.Path, v.Baseline), v.BaselineID, ratioText(v))
			}
		}
		_, err := fmt.Fprintf(w, "| %s | %s | `%s` | %s | %s | %s | %s |\n", v.Status, mdEscape(v.Step), c.Path,
			value, bound, base, mdEscape(v.Note))
		if err != nil {
			return err
		}
	}
	return nil
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

// WriteFiles writes the verdicts as JUnit XML to junit and as a Markdown
// table to markdown, each when it is not "".
func (r *Report) WriteFiles(junit, markdown string) error {
	if err := writeFileWith(junit, r.WriteJUnit); err != nil {
		return fmt.Errorf("writing the JUnit file: %w", err)
	}
	if err := writeFileWith(markdown, r.WriteMarkdown); err != nil {
		return fmt.Errorf("writing the Markdown file: %w", err)
	}
	return nil
}

// writeFileWith writes path with write, when path is set.
func writeFileWith(path string, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
