package check

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const planRelative = `
name: rel
steps:
  - name: up
    kind: client
    args: ["198.18.0.2", "-u", "-b", "100M", "-t", "4"]
    criteria:
      - receiver.bits_per_second >= 90M
      - receiver.bits_per_second >= 95% of baseline
      - receiver.jitter_ms <= 110% of baseline
      - loss_percent <= 110% of baseline
`

// TestCheckOutputGolden: the text, Markdown and JUnit of two checks of a
// plan with relative criteria, the first setting the baseline
// (--update-baseline), the second 10 % slower. Shares read as written
// ("110 %"), and the first run's skips say that it becomes the baseline,
// not to run with --update-baseline. Run with -update to rewrite
// testdata/relative.golden.
func TestCheckOutputGolden(t *testing.T) {
	st := openStore(t)
	f := &fakeRunner{st: st, rates: map[string][]float64{"up": {95, 85.5}}}
	p, err := ParsePlan(strings.NewReader(planRelative))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for i, update := range []bool{true, false} {
		rep, err := Run(context.Background(), p, Options{Run: f.run, Store: st, UpdateBaseline: update})
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("== run " + string(rune('1'+i)) + " text\n")
		rep.WriteText(&out)
		out.WriteString("== markdown\n")
		rep.WriteMarkdown(&out)
		out.WriteString("== junit\n")
		rep.WriteJUnit(&out)
	}
	got := strings.ReplaceAll(out.String(), st.Location(), "STORE")
	got = regexp.MustCompile(`time="[0-9.]+"`).ReplaceAllString(got, `time="T"`)
	golden := filepath.Join("testdata", "relative.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to rewrite it after checking):\n%s", golden, got)
	}
	for _, bad := range []string{"110.00000000000001", "run once with --update-baseline"} {
		if strings.Contains(got, bad) {
			t.Errorf("output says %q", bad)
		}
	}
}
