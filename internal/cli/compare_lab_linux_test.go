//go:build linux && netlab

// A rate assertion, so a lab-tier test behind the netlab build tag like the
// other shaping tests:
//
//	go test -tags netlab -run TestCompareShapedLab -v ./internal/cli/

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
)

// TestCompareShapedLab: the same UDP test (1470-byte datagrams offered at
// 110 Mbit/s) over a lab wire shaped at 100 Mbit/s and then at 88 Mbit/s,
// each saved with a label; `compare rate=100 rate=88` reports B at 88 %
// of A (±1 %), and with --fail-below 95% exits 4.
func TestCompareShapedLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the lab creates network namespaces")
	}
	if err := netlab.Available(); err != nil {
		t.Skipf("no lab: %v", err)
	}
	db := filepath.Join(t.TempDir(), "results.db")
	for _, rate := range []struct {
		label string
		bps   uint64
	}{{"100", 100e6}, {"88", 88e6}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		lab, err := netlab.New(ctx, netlab.Config{Name: "cmp" + rate.label, RateBPS: rate.bps})
		if err != nil {
			cancel()
			t.Fatalf("lab at %s Mbit/s: %v", rate.label, err)
		}
		self := func(h *netlab.Host, args ...string) *bytesCmd {
			c := h.Command(ctx, os.Args[0], append([]string{"-test.run=^TestLabWirebenchHelper$"}, args...)...)
			c.Env = append(os.Environ(), labMainEnv+"=1")
			bc := &bytesCmd{}
			c.Stdout, c.Stderr = &bc.out, &bc.err
			bc.cmd = c
			return bc
		}
		srv := self(lab.B, "server", "-1", "--no-save", "--iperf3-port", "0")
		if err := srv.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // the server binds; a client too early gets no report and fails below
		cli := self(lab.A, "client", lab.B.Addr.String(), "-t", "8", "-i", "0.5",
			"--db", db, "--label", "rate="+rate.label, "--label", "test=compare_lab")
		err = cli.cmd.Run()
		_ = srv.cmd.Wait()
		if cerr := lab.Close(); cerr != nil {
			t.Errorf("closing the lab: %v", cerr)
		}
		cancel()
		if err != nil {
			t.Fatalf("client at %s Mbit/s: %v\n%s%s\nserver: %s%s", rate.label, err, cli.out.String(), cli.err.String(), srv.out.String(), srv.err.String())
		}
		t.Logf("%s Mbit/s:\n%s", rate.label, lastLines(cli.out.String(), 3))
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"compare", "rate=100", "rate=88", "--db", db, "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, errb.String())
	}
	var doc compareDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Comparisons) != 1 {
		t.Fatalf("compare JSON: %v\n%s", err, out.String())
	}
	ratio, ok := doc.Comparisons[0].Ratio["throughput"]
	t.Logf("throughput ratio %.4f; metrics %+v", ratio, doc.Comparisons[0].Metrics[0])
	if !ok || math.Abs(ratio-0.88) > 0.01 {
		t.Errorf("B/A throughput %.4f, want 0.88 ± 0.01", ratio)
	}
	out.Reset()
	errb.Reset()
	code := run(context.Background(), []string{"compare", "rate=100", "rate=88", "--db", db, "--fail-below", "95%"}, &out, &errb)
	t.Logf("compare --fail-below 95%%: exit %d\n%s", code, out.String())
	if code != exitThreshold || !strings.Contains(out.String(), "verdict: FAIL") {
		t.Errorf("--fail-below 95%%: exit %d, want %d with a FAIL verdict\n%s%s", code, exitThreshold, out.String(), errb.String())
	}
}

// bytesCmd is a command with its output captured.
type bytesCmd struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
