// Package check runs a plan of measurements as a gate for continuous
// integration: it reads the plan (YAML: named steps, each a wirebench
// command with its arguments and labels, and criteria on figures of the
// step's result document), runs each step through a Runner (the command
// line's own code, in this process), evaluates the criteria against
// absolute bounds and against a baseline run from the results store, and
// writes the verdicts as text, JUnit XML and Markdown. It opens no socket
// itself.
package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
)

// Kind is one kind of step: the wirebench command it runs and the "kind"
// of the result document that command prints with --json. Adding a kind
// of step is adding a row to Kinds.
type Kind struct {
	// Command is the subcommand ("client").
	Command string
	// DocKind is the result document's "kind" ("test").
	DocKind string
	// Doc is the document's Go type, whose fields a criterion's path is
	// checked against before any step runs (schema.go).
	Doc reflect.Type
}

// Kinds are the step kinds a plan may use.
var Kinds = map[string]Kind{
	"client":  {Command: "client", DocKind: result.KindTest, Doc: reflect.TypeFor[result.Result]()},
	"matrix":  {Command: "matrix", DocKind: result.KindMatrix, Doc: reflect.TypeFor[result.Matrix]()},
	"sweep":   {Command: "sweep", DocKind: result.KindSweep, Doc: reflect.TypeFor[result.Sweep]()},
	"ping":    {Command: "ping", DocKind: result.KindPing, Doc: reflect.TypeFor[result.Ping]()},
	"rfc2544": {Command: "rfc2544", DocKind: result.KindRFC2544, Doc: reflect.TypeFor[result.RFC2544]()},
}

// reservedFlags are set by check itself on every step.
var reservedFlags = []string{"--json", "--csv", "--label", "--db", "--no-save", "--json-iperf3"}

// Plan is a parsed plan file.
type Plan struct {
	// Name names the plan (the JUnit test suite); default: the file name
	// without its extension.
	Name string `yaml:"name"`
	// Labels go on every step's saved run, and select the baseline.
	Labels map[string]string `yaml:"labels"`
	Steps  []Step            `yaml:"steps"`
}

// Step is one measurement of a plan.
type Step struct {
	Name string `yaml:"name"`
	// Kind is a key of Kinds.
	Kind string `yaml:"kind"`
	// Args are the command's own arguments and flags, as typed after
	// "wirebench KIND".
	Args []string `yaml:"args"`
	// Labels are added to the plan's for this step's run.
	Labels map[string]string `yaml:"labels"`
	// CriteriaText are the criteria as written; Criteria parsed.
	CriteriaText []string    `yaml:"criteria"`
	Criteria     []Criterion `yaml:"-"`
}

// ErrPlan marks an error in the plan (exit code 2).
var ErrPlan = errors.New("bad plan")

func planErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrPlan, fmt.Sprintf(format, args...))
}

// LoadPlan reads and checks the plan file at path.
func LoadPlan(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the plan: %v", ErrPlan, err)
	}
	p, err := ParsePlan(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return p, nil
}

// ParsePlan reads a plan; unknown keys, unknown kinds, duplicate step
// names, reserved flags and criteria that do not parse are errors wrapping
// ErrPlan.
func ParsePlan(r io.Reader) (*Plan, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var p Plan
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, planErr("the plan is empty: it needs steps")
		}
		return nil, planErr("%v", err)
	}
	if len(p.Steps) == 0 {
		return nil, planErr("no steps: a plan needs at least one step under \"steps:\"")
	}
	if err := checkLabels(p.Labels, "the plan's labels"); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i := range p.Steps {
		s := &p.Steps[i]
		if err := s.check(i, seen); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

func (s *Step) check(i int, seen map[string]bool) error {
	if s.Name == "" {
		return planErr("step %d has no name", i+1)
	}
	if strings.ContainsAny(s.Name, ",= ") {
		return planErr("step %q: a name holds no ',', '=' or space (it becomes a label)", s.Name)
	}
	if seen[s.Name] {
		return planErr("two steps are named %q", s.Name)
	}
	seen[s.Name] = true
	if _, ok := Kinds[s.Kind]; !ok {
		return planErr("step %q: kind %q is not one of %s", s.Name, s.Kind, strings.Join(KindNames(), ", "))
	}
	for _, a := range s.Args {
		for _, r := range reservedFlags {
			if a == r || strings.HasPrefix(a, r+"=") {
				return planErr("step %q: %s is set by check itself (output as JSON, labels and the store from the plan and --db); leave it out of args", s.Name, r)
			}
		}
	}
	if err := checkLabels(s.Labels, "step "+s.Name+"'s labels"); err != nil {
		return err
	}
	if len(s.CriteriaText) == 0 {
		return planErr("step %q has no criteria: a step that checks nothing gates nothing", s.Name)
	}
	for _, t := range s.CriteriaText {
		c, err := ParseCriterion(t)
		if err != nil {
			return planErr("step %q: %v", s.Name, err)
		}
		s.Criteria = append(s.Criteria, c)
	}
	return nil
}

func checkLabels(l map[string]string, what string) error {
	for k, v := range l {
		if _, _, err := store.ParseLabel(k + "=" + v); err != nil || strings.Contains(k, "=") {
			return planErr("%s: invalid label %q", what, k)
		}
		if k == LabelStep || k == LabelBaseline || k == LabelPlan {
			return planErr("%s: label %q is set by check itself", what, k)
		}
	}
	return nil
}

// KindNames lists the step kinds, sorted.
func KindNames() []string {
	var n []string
	for k := range Kinds {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Labels check puts on each step's run besides the plan's and the step's.
const (
	LabelPlan     = "plan"
	LabelStep     = "step"
	LabelBaseline = "baseline"
)

// RunLabels are the labels of step s's saved run: the plan's, the step's,
// plan=NAME and step=NAME, and baseline=NAME when it becomes the baseline
// (baseline "" otherwise).
func (p *Plan) RunLabels(s *Step, baseline string) map[string]string {
	l := map[string]string{LabelPlan: p.Name, LabelStep: s.Name}
	for k, v := range p.Labels {
		l[k] = v
	}
	for k, v := range s.Labels {
		l[k] = v
	}
	if baseline != "" {
		l[LabelBaseline] = baseline
	}
	return l
}
