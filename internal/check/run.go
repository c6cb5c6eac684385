package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
)

// Runner runs one wirebench command line (argv without the program name)
// and returns its exit code: the command line's own entry point, so a
// step prints and saves exactly what the command would.
type Runner func(ctx context.Context, argv []string, stdout, stderr io.Writer) int

// Options say how a plan is run.
type Options struct {
	// Run runs a step's command.
	Run Runner
	// DB is the results store URL passed to every step (--db); "" is the
	// command's default ($WIREBENCH_DB, else the default file).
	DB string
	// Store is where baselines are looked up: the store the steps save in.
	Store store.Store
	// Baseline is the value of the baseline label that selects the
	// baseline run (and that --update-baseline puts on the new runs);
	// "" means "true".
	Baseline string
	// UpdateBaseline labels this invocation's runs as the baseline.
	UpdateBaseline bool
	// Log receives the steps' own stderr and progress lines.
	Log io.Writer
}

// Status of a verdict.
const (
	Pass  = "PASS"
	Fail  = "FAIL"
	Skip  = "SKIP"  // no baseline to compare with
	Error = "ERROR" // the step could not run or the figure is missing
)

// Verdict is the outcome of one criterion.
type Verdict struct {
	Step      string
	Criterion Criterion
	Status    string
	// Value is the figure of this run; Bound what it was held to (for a
	// relative criterion, the share times the baseline figure).
	Value, Bound float64
	// ValueText, when not "", is this run's figure where the document
	// holds only a bound of it (">= 12 frames", BoundError): Value is then
	// no figure.
	ValueText string
	// Baseline is the baseline run's figure and id, for a relative criterion
	// that found one.
	Baseline   float64
	BaselineID int64
	// Ratio is Value/Baseline; RatioCI95 the half-width of its 95 % Welch
	// interval when both runs carry per-interval samples.
	Ratio, RatioCI95 *float64
	// RunID is the id this step's run was saved as (0: not saved).
	RunID int64
	// Note explains a SKIP or ERROR, or qualifies a verdict.
	Note    string
	Seconds float64
}

// Report is the outcome of a plan.
type Report struct {
	Plan     string
	Verdicts []Verdict
	// StepErrors name the steps that could not run, with why.
	StepErrors map[string]string
	Seconds    float64
}

// Exit codes of a check.
const (
	ExitPass     = 0
	ExitStep     = 1 // a step could not run
	ExitBadPlan  = 2
	ExitCriteria = 4 // a criterion failed
)

// ExitCode is the process exit code for r: 1 when a step could not run
// or a figure could not be had (an ERROR verdict), else 4 when a
// criterion failed, else 0.
func (r *Report) ExitCode() int {
	code := ExitPass
	for _, v := range r.Verdicts {
		switch v.Status {
		case Error:
			return ExitStep
		case Fail:
			code = ExitCriteria
		}
	}
	if len(r.StepErrors) > 0 {
		return ExitStep
	}
	return code
}

// Run runs every step of p in order and evaluates its criteria. Its error
// is a bad plan (ErrPlan: a figure the documents do not have) or a
// cancelled context; a step that fails is reported in the Report.
func Run(ctx context.Context, p *Plan, o Options) (*Report, error) {
	if o.Baseline == "" {
		o.Baseline = "true"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	start := time.Now()
	rep := &Report{Plan: p.Name, StepErrors: map[string]string{}}
	if err := p.CheckPaths(); err != nil {
		return rep, err
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		if ctx.Err() != nil {
			return rep, fmt.Errorf("interrupted before step %q: %w", s.Name, ctx.Err())
		}
		vs, err := runStep(ctx, p, s, o)
		if err != nil {
			if errors.Is(err, ErrPlan) || ctx.Err() != nil {
				return rep, err
			}
			rep.StepErrors[s.Name] = err.Error()
			for _, c := range s.Criteria {
				rep.Verdicts = append(rep.Verdicts, Verdict{Step: s.Name, Criterion: c, Status: Error, Note: "step could not run: " + err.Error()})
			}
			continue
		}
		rep.Verdicts = append(rep.Verdicts, vs...)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// stepRun is one step's output.
type stepRun struct {
	doc   any    // decoded with UseNumber
	raw   []byte // as printed
	runID int64
}

func runStep(ctx context.Context, p *Plan, s *Step, o Options) ([]Verdict, error) {
	kind := Kinds[s.Kind]
	// The baseline is the newest run before this one: looked up first, so
	// a run labelled as the new baseline is not compared with itself.
	base, baseErr := findBaseline(ctx, p, s, o)
	baseLabel := ""
	if o.UpdateBaseline {
		baseLabel = o.Baseline
	}
	argv := append([]string{kind.Command}, s.Args...)
	argv = append(argv, "--json")
	labels := p.RunLabels(s, baseLabel)
	for _, k := range sortedKeys(labels) {
		argv = append(argv, "--label", k+"="+labels[k])
	}
	if o.DB != "" {
		argv = append(argv, "--db", o.DB)
	}
	fmt.Fprintf(o.Log, "check: step %s: wirebench %s\n", s.Name, joinArgs(argv))
	var out bytes.Buffer
	t0 := time.Now()
	code := o.Run(ctx, argv, &out, o.Log)
	secs := time.Since(t0).Seconds()
	if code != 0 {
		return nil, fmt.Errorf("wirebench %s exited with code %d", kind.Command, code)
	}
	run, err := decodeDoc(out.Bytes(), kind.DocKind)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", s.Name, err)
	}
	if run.runID == 0 && o.UpdateBaseline {
		return nil, fmt.Errorf("the run was not saved in the results store (see the warning above), so it cannot become the baseline")
	}
	var vs []Verdict
	for _, c := range s.Criteria {
		v, err := evaluate(c, run, base, baseErr)
		if err != nil {
			return nil, fmt.Errorf("%w: step %q: %v", ErrPlan, s.Name, err)
		}
		v.Step, v.RunID, v.Seconds = s.Name, run.runID, secs
		vs = append(vs, v)
	}
	return vs, nil
}

func decodeDoc(b []byte, want string) (*stepRun, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("reading the command's JSON output: %w", err)
	}
	obj, _ := doc.(map[string]any)
	if k, _ := obj["kind"].(string); k != want {
		return nil, fmt.Errorf("the command printed a %q document, want %q", k, want)
	}
	if e, _ := obj["error"].(string); e != "" {
		return nil, fmt.Errorf("the run ended early: %s", e)
	}
	if stopped, _ := obj["interrupted"].(bool); stopped {
		return nil, errors.New("the run was interrupted before it finished")
	}
	r := &stepRun{doc: withDerived(doc), raw: b}
	if n, ok := obj["run_id"].(json.Number); ok {
		r.runID, _ = n.Int64()
	}
	return r, nil
}

// findBaseline returns the newest run carrying the step's labels and
// baseline=o.Baseline, or an error saying why there is none.
func findBaseline(ctx context.Context, p *Plan, s *Step, o Options) (*stepRun, error) {
	if o.Store == nil {
		return nil, errors.New("no results store")
	}
	f := store.Filter{Labels: p.RunLabels(s, o.Baseline), Kind: Kinds[s.Kind].DocKind}
	r, err := o.Store.Latest(ctx, f)
	if errors.Is(err, store.ErrNotFound) && o.UpdateBaseline {
		return nil, fmt.Errorf("no earlier baseline run labelled %s in %s: this run becomes the baseline (--update-baseline)",
			result.FormatLabels(f.Labels), o.Store.Location())
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no baseline run labelled %s in %s (run once with --update-baseline to set one)",
			result.FormatLabels(f.Labels), o.Store.Location())
	}
	if err != nil {
		return nil, fmt.Errorf("looking up the baseline: %w", err)
	}
	b, err := decodeDoc(r.Result, f.Kind)
	if err != nil {
		return nil, fmt.Errorf("baseline run %d: %w", r.ID, err)
	}
	b.runID = r.ID
	return b, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func joinArgs(a []string) string {
	var b bytes.Buffer
	for i, s := range a {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return b.String()
}
