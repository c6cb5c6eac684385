package cli

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkPlan is a three-step plan against a server on loopback port. The
// bounds are far below what loopback carries, so only a broken step fails
// them; the failing case comes from a baseline with known figures.
func checkPlan(port string) string {
	return fmt.Sprintf(`name: loop
labels: {device: loopback}
steps:
  - name: tcp-up
    kind: client
    args: ["127.0.0.1", "-p", "%[1]s", "-t", "0.5", "-i", "0.1"]
    criteria:
      - receiver.bits_per_second >= 1M
      - receiver.bits_per_second >= 1%% of baseline
  - name: udp-up
    kind: client
    args: ["127.0.0.1", "-p", "%[1]s", "-u", "-b", "2M", "-t", "0.5", "-i", "0.1"]
    labels: {rate: 2M}
    criteria:
      - receiver.packets >= 10
      - receiver.loss_percent <= 50
      - receiver.bits_per_second >= 1%% of baseline
  - name: udp-small
    kind: client
    args: ["127.0.0.1", "-p", "%[1]s", "-u", "-b", "1M", "-l", "100", "-t", "0.5"]
    criteria:
      - sender.packets >= 10
`, port)
}

func writePlan(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckLoopback: `check` on a three-step plan against an in-process
// server: the first run sets the baseline (relative criteria skipped),
// the second passes everything, and against a saved baseline at
// 100 Tbit/s the relative criteria fail with exit 4, in a JUnit file
// that parses, one test case per criterion, each failure naming both
// figures and the baseline run.
func TestCheckLoopback(t *testing.T) {
	port := startEchoServer(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	plan := writePlan(t, checkPlan(port))

	code, out, errOut := cliRun("check", plan, "--db", db, "--update-baseline")
	t.Logf("first run:\n%s", out)
	if code != exitOK || strings.Count(out, "SKIP ") != 2 || strings.Count(out, "PASS ") != 4 {
		t.Fatalf("first run: exit %d, want 0 with 2 skipped and 4 passed\n%s%s", code, out, errOut)
	}
	code, out, errOut = cliRun("history", "--db", db, "--label", "baseline=true", "--label", "plan=loop")
	if code != exitOK || strings.Count(out, "step=") != 3 {
		t.Fatalf("history of the baseline runs: exit %d\n%s%s", code, out, errOut)
	}

	junit, md := filepath.Join(dir, "j.xml"), filepath.Join(dir, "m.md")
	code, out, errOut = cliRun("check", plan, "--db", db, "--junit", junit, "--markdown", md)
	t.Logf("second run:\n%s", out)
	if code != exitOK || strings.Count(out, "PASS ") != 6 || !strings.Contains(out, "of baseline") {
		t.Fatalf("second run: exit %d, want 0 with 6 passed against the baseline\n%s%s", code, out, errOut)
	}
	if s := readJUnit(t, junit); s.Tests != 6 || s.Failures != 0 || len(s.Cases) != 6 {
		t.Errorf("JUnit of the passing run: %+v", s)
	}
	if b, _ := os.ReadFile(md); !strings.Contains(string(b), "| PASS | udp-up | `receiver.loss_percent` |") {
		t.Errorf("Markdown:\n%s", b)
	}

	// A baseline named "fast" at 100 Tbit/s, which no loopback carries.
	for _, step := range []string{"tcp-up", "udp-up"} {
		saveDoc(t, db, udpTestDoc(1e8, []float64{1e8, 1e8}), "plan=loop", "step="+step, "device=loopback", "rate=2M", "baseline=fast")
	}
	code, out, errOut = cliRun("check", plan, "--db", db, "--baseline", "fast", "--junit", junit)
	t.Logf("against the fast baseline:\n%s", out)
	if code != exitThreshold || strings.Count(out, "FAIL ") != 2 {
		t.Fatalf("against a faster baseline: exit %d, want %d with 2 failures\n%s%s", code, exitThreshold, out, errOut)
	}
	s := readJUnit(t, junit)
	if s.Tests != 6 || s.Failures != 2 || len(s.Cases) != 6 {
		t.Fatalf("JUnit: %+v", s)
	}
	for _, c := range s.Cases {
		if c.Failure == nil {
			continue
		}
		m := c.Failure.Message
		if !strings.Contains(m, "receiver.bits_per_second = ") || !strings.Contains(m, "of baseline 100 Tbits/sec (run ") ||
			!strings.Contains(c.Failure.Text, m) {
			t.Errorf("failure of %q does not name both figures and the baseline run: %q", c.Name, m)
		}
	}
}

type junitSuite1 struct {
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
}

func readJUnit(t *testing.T, path string) junitSuite1 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		XMLName xml.Name      `xml:"testsuites"`
		Suites  []junitSuite1 `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &d); err != nil || len(d.Suites) != 1 {
		t.Fatalf("JUnit does not parse (%v):\n%s", err, b)
	}
	return d.Suites[0]
}

// TestCheckExitCodes: a bad plan exits 2, a figure the document does not
// have exits 2 naming the valid one nearest to it before any step runs,
// a step that cannot run exits 1.
func TestCheckExitCodes(t *testing.T) {
	port := startEchoServer(t)
	db := filepath.Join(t.TempDir(), "results.db")
	code, _, errOut := cliRun("check", writePlan(t, "steps: [{name: a, kind: iperf, criteria: [\"x >= 1\"]}]"), "--db", db)
	if code != exitUsage || !strings.Contains(errOut, `kind "iperf" is not one of`) {
		t.Errorf("bad kind: exit %d: %s", code, errOut)
	}
	code, _, errOut = cliRun("check", writePlan(t, fmt.Sprintf(`steps: [{name: a, kind: client, args: [127.0.0.1, -p, "%s", -t, "0.2"],
  criteria: ["reciever.bits_per_second >= 1M"]}]`, port)), "--db", db)
	// Found before the step runs: no "check: step a:" line.
	if code != exitUsage || !strings.Contains(errOut, `did you mean "receiver.bits_per_second"?`) || strings.Contains(errOut, "check: step a:") {
		t.Errorf("unknown figure: exit %d: %s", code, errOut)
	}
	code, out, errOut := cliRun("check", writePlan(t, `steps: [{name: a, kind: client, args: ["127.0.0.1", "-p", "1", "-t", "0.2"],
  criteria: ["receiver.bits_per_second >= 1M"]}]`), "--db", db)
	if code != exitFailure || !strings.Contains(out, "ERROR a: receiver.bits_per_second >= 1M") {
		t.Errorf("step that cannot run: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestCheckShortForms: the criteria as users write them — a matrix cell's
// figure by its short form (udp.upload.bits_per_second), a client test's
// loss_percent — and an rfc2544 step, against an in-process server and
// reflector on loopback. The run becomes the baseline, so every step's
// printed document must carry its run id. The back-to-back criterion holds
// for the result (64, the longest burst tried, none lost) and for the bound
// a busy host leaves when it sent a burst below line rate (>= 64), as check
// judges a bound (docs/ci.md).
func TestCheckShortForms(t *testing.T) {
	port, refl := startEchoServer(t), plainReflector(t)
	db := filepath.Join(t.TempDir(), "results.db")
	plan := writePlan(t, fmt.Sprintf(`name: short
steps:
  - name: udp-matrix
    kind: matrix
    args: ["127.0.0.1", "-p", "%[1]s", "--proto", "udp", "-b", "2M", "-t", "1", "-i", "0.5"]
    criteria:
      - udp.upload.bits_per_second >= 1M
      - udp.upload.loss_percent <= 50
      - udp.download.bits_per_second >= 1%% of baseline
  - name: udp-up
    kind: client
    args: ["127.0.0.1", "-p", "%[1]s", "-u", "-b", "2M", "-t", "0.5"]
    criteria:
      - loss_percent <= 50
  - name: b2b
    kind: rfc2544
    args: ["127.0.0.1", "-p", "%[2]s", "--mode", "reflect", "--medium", "custom:20M,38", "--sizes", "512",
           "--tests", "backtoback", "--max-burst", "64", "--gap", "50ms"]
    criteria:
      - sizes[size=512].back_to_back_frames >= 32
`, port, refl))
	code, out, errOut := cliRun("check", plan, "--db", db, "--update-baseline")
	t.Logf("check:\n%s", out)
	if code != exitOK || strings.Count(out, "PASS ") != 4 || strings.Count(out, "SKIP ") != 1 {
		t.Fatalf("exit %d, want 0 with 4 passed and 1 skipped\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"PASS  udp-matrix: udp.upload.bits_per_second = ", "PASS  udp-up: loss_percent = ",
		"PASS  b2b: sizes[size=512].back_to_back_frames"} { // "= 64", or "a bound, not a result: >= 64" where this host slowed a burst
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	code, out, errOut = cliRun("history", "--db", db, "--label", "baseline=true", "--kind", "rfc2544")
	if code != exitOK || !strings.Contains(out, "step=b2b") {
		t.Errorf("the rfc2544 step's run is not the baseline: exit %d\n%s%s", code, out, errOut)
	}
}
