package check

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/store"
)

// fakeRunner stands in for the command line: it prints a test document
// with the next figure of rates (Mbit/s, four 1 s intervals around it)
// and saves it with the labels of the command line, as the command does.
type fakeRunner struct {
	st    store.Store
	rates map[string][]float64 // by step label
	argvs [][]string
	fail  string // a step whose command exits 1
}

func (f *fakeRunner) run(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	f.argvs = append(f.argvs, argv)
	labels := map[string]string{}
	for i, a := range argv {
		if a == "--label" {
			k, v, _ := strings.Cut(argv[i+1], "=")
			labels[k] = v
		}
	}
	step := labels[LabelStep]
	if step == f.fail {
		fmt.Fprintln(stderr, "wirebench: connection refused")
		return 1
	}
	r := f.rates[step][0]
	f.rates[step] = f.rates[step][1:]
	doc := testDoc(r, []float64{r - 0.5, r + 0.5, r - 0.3, r + 0.3})
	id, err := f.st.Save(ctx, &store.Run{Kind: "test", Labels: labels, Result: json.RawMessage(doc)})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprint(stdout, strings.Replace(doc, `"kind":"test"`, fmt.Sprintf(`"kind":"test","run_id":%d`, id), 1))
	return 0
}

func testDoc(mbps float64, intervals []float64) string {
	var ins []string
	for i, v := range intervals {
		ins = append(ins, fmt.Sprintf(`{"start_s":%d,"end_s":%d,"bits_per_second":%g,"packets":1000,"lost":0,"jitter_ms":0.1}`, i, i+1, v*1e6))
	}
	return fmt.Sprintf(`{"schema":"wirebench/1","kind":"test","role":"client","test":{"protocol":"udp","direction":"send"},"intervals":[%s],
		"receiver":{"bits_per_second":%g,"packets":3996,"lost":4,"total":4000,"jitter_ms":0.1}}`, strings.Join(ins, ","), mbps*1e6)
}

const plan3 = `
name: link
labels: {device: pic32}
steps:
  - name: up
    kind: client
    args: ["198.18.0.2", "-u", "-b", "100M", "-t", "4"]
    criteria:
      - receiver.bits_per_second >= 90M
      - receiver.loss_percent <= 0.2
      - receiver.bits_per_second >= 95% of baseline
  - name: down
    kind: client
    args: ["198.18.0.2", "-u", "-b", "100M", "-t", "4", "-R"]
    labels: {dir: down}
    criteria:
      - receiver.bits_per_second >= 95% of baseline
  - name: small
    kind: client
    args: ["198.18.0.2", "-u", "-b", "10M", "-l", "100", "-t", "4"]
    criteria:
      - receiver.bits_per_second >= 9M
`

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestRunBaseline: a first run sets the baseline (relative criteria
// skipped), a second at the same figures passes, a third 10 % slower fails
// the baseline criteria with exit 4 and a JUnit failure that names both
// figures and the baseline run; absolute criteria judge on their own.
func TestRunBaseline(t *testing.T) {
	st := openStore(t)
	f := &fakeRunner{st: st, rates: map[string][]float64{"up": {95, 95.2, 85.5}, "down": {94, 94, 84.6}, "small": {9.5, 9.5, 9.5}}}
	p, err := ParsePlan(strings.NewReader(plan3))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Run: f.run, Store: st, DB: "x.db"}

	first, err := Run(context.Background(), p, Options{Run: f.run, Store: st, DB: "x.db", UpdateBaseline: true})
	if err != nil || first.ExitCode() != ExitPass {
		t.Fatalf("first run: %v, exit %d", err, first.ExitCode())
	}
	if n := first.counts(); n[Skip] != 2 || n[Pass] != 3 {
		t.Errorf("first run: %v, want 2 skipped (no baseline yet) and 3 passed", n)
	}
	want := "client 198.18.0.2 -u -b 100M -t 4 -R --json --label baseline=true --label device=pic32 --label dir=down --label plan=link --label step=down --db x.db"
	if got := strings.Join(f.argvs[1], " "); got != want {
		t.Errorf("argv %q, want like %q", got, want)
	}

	second, err := Run(context.Background(), p, opts)
	if err != nil || second.ExitCode() != ExitPass || second.counts()[Pass] != 5 {
		var b bytes.Buffer
		second.WriteText(&b)
		t.Fatalf("second run: %v, exit %d\n%s", err, second.ExitCode(), b.String())
	}

	third, err := Run(context.Background(), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	var text, junit bytes.Buffer
	third.WriteText(&text)
	t.Logf("third run:\n%s", text.String())
	if third.ExitCode() != ExitCriteria {
		t.Fatalf("third run: exit %d, want %d", third.ExitCode(), ExitCriteria)
	}
	if err := third.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	suites := parseJUnit(t, junit.Bytes())
	s := suites.Suites[0]
	if s.Name != "link" || s.Tests != 5 || len(s.Cases) != 5 || s.Failures != 3 {
		t.Fatalf("JUnit: %+v", s)
	}
	// The baseline is the first run: the second was not labelled.
	f0 := s.Cases[0].Failure // up: 85.5 < 90M
	f2 := s.Cases[2].Failure // up: 85.5 of baseline 95
	if f0 == nil || s.Cases[1].Failure != nil || f2 == nil || s.Cases[3].Failure == nil || s.Cases[4].Failure != nil {
		t.Fatalf("JUnit failures: %+v", s.Cases)
	}
	for _, w := range []string{"85.5 Mbits/sec", "90.0 % (95 % interval ±0.825)", "of baseline 95.0 Mbits/sec (run 1)", "want >= 95 %"} {
		if !strings.Contains(f2.Message, w) {
			t.Errorf("failure message %q does not say %q", f2.Message, w)
		}
	}
}

type junitDoc struct {
	Suites []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, b []byte) junitDoc {
	t.Helper()
	var d junitDoc
	if err := xml.Unmarshal(b, &d); err != nil || len(d.Suites) != 1 {
		t.Fatalf("JUnit does not parse (%v):\n%s", err, b)
	}
	return d
}

// TestRunStepFails: a step whose command fails gives exit 1 and an error
// for each of its criteria; the other steps still run.
func TestRunStepFails(t *testing.T) {
	st := openStore(t)
	f := &fakeRunner{st: st, fail: "down", rates: map[string][]float64{"up": {95}, "small": {9.5}}}
	p, err := ParsePlan(strings.NewReader(plan3))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), p, Options{Run: f.run, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode() != ExitStep || rep.counts()[Error] != 1 || !strings.Contains(rep.StepErrors["down"], "exited with code 1") {
		t.Errorf("exit %d, %v, %v", rep.ExitCode(), rep.counts(), rep.StepErrors)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "| ERROR | down |") {
		t.Errorf("markdown (%v):\n%s", err, md.String())
	}
}

// TestRunUnknownFigure: a criterion on a figure the document lacks is a
// plan error naming the valid figures near it.
func TestRunUnknownFigure(t *testing.T) {
	st := openStore(t)
	f := &fakeRunner{st: st, rates: map[string][]float64{"a": {95}}}
	p, err := ParsePlan(strings.NewReader(`steps: [{name: a, kind: client, args: [h], criteria: ["reciever.bits_per_second >= 1M"]}]`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), p, Options{Run: f.run, Store: st})
	if !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), "receiver.bits_per_second") {
		t.Errorf("error %v, want a plan error naming receiver.bits_per_second", err)
	}
}

func TestParsePlanErrors(t *testing.T) {
	for _, tc := range []struct{ plan, want string }{
		{``, "the plan is empty"},
		{`name: x`, "no steps"},
		{`steps: [{name: a, kind: iperf, criteria: ["x >= 1"]}]`, `kind "iperf" is not one of client, matrix, ping, rfc2544, sweep`},
		{`steps: [{name: a, kind: client, critera: ["x >= 1"]}]`, "field critera not found"},
		{`steps: [{name: a, kind: client}]`, "has no criteria"},
		{`steps: [{kind: client, criteria: ["x >= 1"]}]`, "step 1 has no name"},
		{`steps: [{name: a, kind: client, args: [h, --json], criteria: ["x >= 1"]}]`, "--json is set by check itself"},
		{`steps: [{name: a, kind: client, criteria: ["x >= 1"]}, {name: a, kind: ping, criteria: ["x >= 1"]}]`, `two steps are named "a"`},
		{`steps: [{name: a, kind: client, criteria: ["x => 1"]}]`, `step "a": criterion "x => 1"`},
		{`labels: {step: x}
steps: [{name: a, kind: client, criteria: ["x >= 1"]}]`, `label "step" is set by check itself`},
	} {
		_, err := ParsePlan(strings.NewReader(tc.plan))
		if err == nil || !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want a plan error saying %q", tc.plan, err, tc.want)
		}
	}
}

// TestNullFigureIsAnError: a figure the run left null (a matrix cell with
// no figure) is an ERROR verdict and exit 1, never a pass.
func TestNullFigureIsAnError(t *testing.T) {
	run := &stepRun{doc: decode(t, matrixDoc)}
	c, _ := ParseCriterion("cells[protocol=tcp].loss_percent <= 1")
	v, err := evaluate(c, run, nil, errors.New("none"))
	if err != nil || v.Status != Error || !strings.Contains(v.Note, "null in this run") {
		t.Fatalf("%+v, %v", v, err)
	}
	if code := (&Report{Verdicts: []Verdict{{Status: Fail}, v}}).ExitCode(); code != ExitStep {
		t.Errorf("exit %d, want %d", code, ExitStep)
	}
}

// TestRunStopsWhenCancelled: no step starts after the context ended.
func TestRunStopsWhenCancelled(t *testing.T) {
	st := openStore(t)
	f := &fakeRunner{st: st, rates: map[string][]float64{"up": {95}, "down": {94}, "small": {9.5}}}
	p, err := ParsePlan(strings.NewReader(plan3))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, p, Options{Run: f.run, Store: st}); !errors.Is(err, context.Canceled) || len(f.argvs) != 0 {
		t.Errorf("error %v after %d steps, want context.Canceled before any", err, len(f.argvs))
	}
}

// TestParsePlanScalars: unquoted numbers in args and labels are taken as
// written (YAML would read them as numbers).
func TestParsePlanScalars(t *testing.T) {
	p, err := ParsePlan(strings.NewReader("labels: {fw: 1.40, n: 7}\nsteps: [{name: a, kind: client, args: [h, -t, 5, -b, 1e6], criteria: [\"x >= 1\"]}]"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Steps[0].Args, " "); got != "h -t 5 -b 1e6" || p.Labels["fw"] != "1.40" || p.Labels["n"] != "7" {
		t.Errorf("args %q, labels %v", got, p.Labels)
	}
}
