//go:build linux && netlab

// Verdicts that depend on measured rates, so a lab-tier test behind the
// netlab build tag like the other shaping tests:
//
//	go test -tags netlab -run TestCheckShapedLab -v ./internal/cli/

package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// labCheckPlan is three short steps from lab host A to a wirebench server
// on B (198.18.0.2), 5 criteria: the wire's UDP goodput, offered above the
// wire rate so the shaper sets it (absolute and against the baseline), a
// TCP test (absolute) and a ping (absolute).
const labCheckPlan = `name: lab
labels: {device: labwire}
steps:
  - name: wire
    kind: client
    args: ["198.18.0.2", "-u", "-b", "110M", "-t", "2", "-i", "0.5"]
    criteria:
      - receiver.bits_per_second >= 50M
      - receiver.bits_per_second >= 95% of baseline
  - name: tcp-up
    kind: client
    args: ["198.18.0.2", "-t", "2", "-i", "0.5"]
    criteria:
      - receiver.bits_per_second >= 50M
  - name: ping
    kind: ping
    args: ["198.18.0.2", "-c", "10", "-i", "0.05"]
    criteria:
      - sizes[size=56].loss_pct <= 0
      - sizes[size=56].rtt_ms.avg <= 50
`

// TestCheckShapedLab: `wirebench check` run in lab host A. Over a wire
// shaped at 100 Mbit/s, a first run sets the baseline and a second passes
// all 5 criteria; over a wire 10 % slower (90 Mbit/s) the wire step's
// baseline criterion fails (about 90 % of the baseline, bound 95 %) and
// the check exits 4, while the absolute criteria still pass; the JUnit
// file holds one test case per criterion and the failure names both
// figures and the baseline run.
func TestCheckShapedLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the lab creates network namespaces")
	}
	if err := netlab.Available(); err != nil {
		t.Skipf("no lab: %v", err)
	}
	dir := t.TempDir()
	db, plan := filepath.Join(dir, "results.db"), filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(plan, []byte(labCheckPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	junit, md := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.md")

	// The baseline must be the wire's figure, not a starved host's: a UDP
	// baseline of 91 Mbit/s or more (theory 95.70 for 1470-byte datagrams)
	// puts the 90 Mbit/s wire (at most 86.13) below 95 % of it whatever the
	// load. An attempt whose
	// baseline reads lower, or whose second run on the same wire falls
	// below 95 % of it, describes the host and is repeated, at most 3 times.
	base := ""
	withLabServer(t, "chk100", 100e6, func(a *netlab.Host) {
		for attempt := 1; attempt <= 3 && base == ""; attempt++ {
			name := fmt.Sprintf("try%d", attempt)
			code, out := checkIn(t, a, plan, "--db", db, "--update-baseline", "--baseline", name)
			if code != exitOK || strings.Count(out, "SKIP ") != 1 {
				t.Fatalf("setting the baseline: exit %d, want 0 with the baseline criterion skipped:\n%s", code, out)
			}
			if bps := wireFigure(t, out); bps < 91e6 {
				t.Logf("attempt %d: the baseline read %.2f Mbit/s, under 91: the host starved the sender; again", attempt, bps/1e6)
				continue
			}
			code, out = checkIn(t, a, plan, "--db", db, "--baseline", name, "--junit", junit)
			if code == exitThreshold && strings.Count(out, "FAIL ") == 1 && strings.Contains(out, "of baseline") {
				t.Logf("attempt %d: the same wire read below 95 %% of its baseline: the host is loaded; again", attempt)
				continue
			}
			if code != exitOK || strings.Count(out, "PASS ") != 5 {
				t.Fatalf("the same wire: exit %d, want 0 with 5 passed:\n%s", code, out)
			}
			if s := readJUnit(t, junit); s.Tests != 5 || s.Failures != 0 {
				t.Errorf("JUnit of the passing run: %+v", s)
			}
			base = name
		}
	})
	if base == "" {
		t.Fatal("no steady baseline in 3 attempts: the host is too loaded to measure the wire")
	}
	withLabServer(t, "chk90", 90e6, func(a *netlab.Host) {
		code, out := checkIn(t, a, plan, "--db", db, "--baseline", base, "--junit", junit, "--markdown", md)
		if code != exitThreshold || strings.Count(out, "FAIL ") != 1 || !strings.Contains(out, "FAIL  wire: receiver.bits_per_second = ") {
			t.Fatalf("a wire 10 %% slower: exit %d, want %d with the wire's baseline criterion failed:\n%s", code, exitThreshold, out)
		}
	})
	s := readJUnit(t, junit)
	if s.Tests != 5 || len(s.Cases) != 5 || s.Failures != 1 {
		t.Fatalf("JUnit: %d tests, %d cases, %d failures; want 5, 5, 1", s.Tests, len(s.Cases), s.Failures)
	}
	f := s.Cases[1].Failure
	if f == nil || !strings.Contains(f.Message, "receiver.bits_per_second = ") || !strings.Contains(f.Message, "Mbits/sec, ") ||
		!strings.Contains(f.Message, " of baseline ") || !strings.Contains(f.Message, "(run ") {
		t.Fatalf("the failure does not name this run's figure, the baseline's and its run: %+v", s.Cases[1])
	}
	t.Logf("JUnit failure: %s", f.Message)
	b, _ := os.ReadFile(md)
	t.Logf("Markdown:\n%s", b)
}

// wireFigure is the wire step's throughput in check's text output.
func wireFigure(t *testing.T, out string) float64 {
	t.Helper()
	m := regexp.MustCompile(`wire: receiver.bits_per_second = ([0-9.]+) Mbits/sec`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no wire figure in Mbit/s in:\n%s", out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v * 1e6
}

// withLabServer builds a lab shaped at bps with a wirebench server on B,
// runs fn with host A, then stops the server and removes the lab.
func withLabServer(t *testing.T, name string, bps uint64, fn func(a *netlab.Host)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lab, err := netlab.New(ctx, netlab.Config{Name: name, RateBPS: bps})
	if err != nil {
		t.Fatalf("lab at %d bit/s: %v", bps, err)
	}
	defer func() {
		if err := lab.Close(); err != nil {
			t.Errorf("closing the lab: %v", err)
		}
	}()
	srvCtx, stop := context.WithCancel(ctx)
	srv := lab.B.Command(srvCtx, os.Args[0], "-test.run=^TestLabWirebenchHelper$", "server", "--no-save", "--iperf3-port", "0")
	srv.Env = append(os.Environ(), labMainEnv+"=1")
	var srvOut loopback.Buffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		stop()
		t.Fatal(err)
	}
	defer func() { stop(); _ = srv.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(srvOut.String(), "listening"); {
		if time.Now().After(deadline) {
			t.Fatalf("the lab server did not say it is listening:\n%s", srvOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	fn(lab.A)
}

// checkIn runs `wirebench check args…` in lab host a and returns its exit
// code and stdout.
func checkIn(t *testing.T, a *netlab.Host, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := a.Command(ctx, os.Args[0], append([]string{"-test.run=^TestLabWirebenchHelper$", "check"}, args...)...)
	c.Env = append(os.Environ(), labMainEnv+"=1")
	var out, errb loopback.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if err != nil {
		ee, ok := err.(interface{ ExitCode() int })
		if !ok {
			t.Fatalf("check: %v", err)
		}
		code = ee.ExitCode()
	}
	t.Logf("check %s: exit %d\n%s", strings.Join(args, " "), code, out.String())
	if code != exitOK && code != exitThreshold {
		t.Logf("stderr:\n%s", errb.String())
	}
	return code, out.String()
}
