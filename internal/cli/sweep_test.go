package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
)

func TestSweepUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"sweep"},
		{"sweep", "127.0.0.1", "--mode", "tcp"},
		{"sweep", "127.0.0.1", "--loss", "2x"},
		{"sweep", "127.0.0.1", "--loss", "100%"},
		{"sweep", "127.0.0.1", "--sizes", "8"},
		{"sweep", "127.0.0.1", "--trial", "0"},
		{"sweep", "127.0.0.1", "--confirm", "-1s"},
		{"sweep", "127.0.0.1", "--confirm", "long"},
		{"sweep", "127.0.0.1", "--trial", "1s", "--packets", "100"},
		{"sweep", "127.0.0.1", "--repeat", "0"},
		{"sweep", "127.0.0.1", "--medium", "eth7"},
		{"sweep", "127.0.0.1", "--max-rate", "fast"},
		{"sweep", "127.0.0.1", "--json", "--csv"},
		{"sweep", "127.0.0.1", "--mode", "reflect", "--dut", "cmd:true"},
		{"sweep", "127.0.0.1", "--packets", "100", "--dut", "cmd:true"},
		{"sweep", "127.0.0.1", "--dut", "usb:x"},
		{"sweep", "127.0.0.1", "--dut", "cmd:true", "--dut-shell", "vxworks"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitUsage || !strings.HasPrefix(errb.String(), "wirebench: ") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errb.String())
		}
	}
}

// plainReflector runs a reflector without a model on a free loopback port.
func plainReflector(t *testing.T) string {
	t.Helper()
	spec, _ := model.Parse("")
	ctx, cancel := context.WithCancel(context.Background())
	f, err := lab.NewReflector(ctx, "127.0.0.1:0", spec, "")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _, _ = f.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return strconv.Itoa(int(f.Addr().Port()))
}

// TestSweepCommandOutputs runs the command against a plain reflector: the
// seed 002 table with confidence intervals for --repeat 3, the JSON
// document with the keys issue 11 names, and the CSV.
func TestSweepCommandOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sweeps over loopback; skipped with -short")
	}
	port := plainReflector(t)
	db := filepath.Join(t.TempDir(), "results.db")
	base := []string{"sweep", "127.0.0.1", "-p", port, "--mode", "reflect", "--max-rate", "2000pps", "--trial", "300ms", "--confirm", "600ms", "--gap", "50ms", "--medium", "eth100", "--db", db}

	var out, errb bytes.Buffer
	if code := run(context.Background(), append(base, "--sizes", "512,1024", "--repeat", "3"), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	var hist bytes.Buffer
	if code := run(context.Background(), []string{"history", "--db", db, "--kind", "sweep"}, &hist, &errb); code != exitOK ||
		!strings.Contains(hist.String(), "sweep reflect, 2 sizes, 0 cliffs") {
		t.Errorf("the sweep is not in the results store (exit %d): %s", code, hist.String())
	}
	text := out.String()
	t.Logf("table:\n%s", text)
	for _, want := range []string{"size", "packets sent", "% of line", "rtt (ms)", "± 95 % CI", "3 repetitions", "no cliff",
		"each rate confirmed by a trial of 0.6 s", "what the far end delivered", "held for"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if !strings.Contains(errb.String(), "sweep: 512 B") {
		t.Errorf("no progress lines on stderr: %q", errb.String())
	}
	for _, size := range []string{"512 ", "1024 "} {
		line := ""
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, size) {
				line = l
			}
		}
		if !regexp.MustCompile(`^\d+ +\d+ +\d+ ± \d+ .* (0\.6|0\.3) s +\d+ `).MatchString(line) {
			t.Errorf("row for %s B lacks the rate with its interval: %q", size, line)
		}
	}

	out.Reset()
	errb.Reset()
	if code := run(context.Background(), append(base, "--sizes", "512", "--json"), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out.String())
	}
	if doc["schema"] != "wirebench/1" || doc["kind"] != "sweep" {
		t.Errorf("schema %v kind %v", doc["schema"], doc["kind"])
	}
	if _, ok := doc["cliffs"].([]any); !ok {
		t.Errorf("no cliffs list: %v", doc["cliffs"])
	}
	if test, _ := doc["test"].(map[string]any); test["confirm_s"] != 0.6 {
		t.Errorf("test.confirm_s %v, want 0.6", test["confirm_s"])
	}
	sizes, _ := doc["sizes"].([]any)
	if len(sizes) != 1 {
		t.Fatalf("sizes %v", doc["sizes"])
	}
	s := sizes[0].(map[string]any)
	for _, k := range []string{"size", "rate_pps", "rate_bps", "tried_pps", "held_s", "loss_percent", "trials", "percent_of_line", "limited_by_host", "trial_log"} {
		if _, ok := s[k]; !ok {
			t.Errorf("size entry lacks %q: %v", k, s)
		}
	}
	// A plain reflector passes the highest rate unless this loaded
	// machine made a trial fail; either way the two rates agree.
	if pps, bps := s["rate_pps"].(float64), s["rate_bps"].(float64); pps <= 0 || pps > 2000 || math.Abs(bps-pps*512*8) > 1e-6*bps {
		t.Errorf("rate %v pps %v bit/s, want at most 2000 and 512 × 8 bits each", pps, bps)
	}
	// Confirmed, the rate held for the 0.6 s confirmation; else for a
	// 0.3 s search trial.
	if held := s["held_s"].(float64); (s["confirmed"] == true && held != 0.6) || (s["confirmed"] == false && held != 0.3) {
		t.Errorf("held_s %v (confirmed %v)", held, s["confirmed"])
	}

	out.Reset()
	if code := run(context.Background(), append(base, "--sizes", "512", "--csv"), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	rows := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "size,sent,rate_pps,rate_bps,percent_of_line,loss_percent,trials,rtt_ms,limited_by_host") ||
		!strings.HasSuffix(rows[0], ",held_s,tried_pps,status,reason") || !strings.HasPrefix(rows[1], "512,") {
		t.Errorf("CSV:\n%s", out.String())
	}
}

// TestSweepInterruptWritesPartialJSON: a Ctrl-C (the context ends) stops
// the sweep after the trial under way; the JSON document still comes out,
// marked interrupted, with the sizes finished until then.
func TestSweepInterruptWritesPartialJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep over loopback; skipped with -short")
	}
	port := plainReflector(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"sweep", "127.0.0.1", "-p", port, "--mode", "reflect", "--max-rate", "2000pps", "--trial", "300ms",
			"--sizes", "64-1400:100", "--json"}, &out, &errb)
	}()
	time.Sleep(1500 * time.Millisecond)
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Kind        string           `json:"kind"`
		Interrupted bool             `json:"interrupted"`
		Sizes       []map[string]any `json:"sizes"`
		Warnings    []string         `json:"warnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out.String())
	}
	if doc.Kind != "sweep" || !doc.Interrupted || len(doc.Sizes) >= 14 || !strings.Contains(strings.Join(doc.Warnings, "\n"), "interrupted") {
		t.Errorf("kind %q, interrupted %v, %d sizes, warnings %q", doc.Kind, doc.Interrupted, len(doc.Sizes), doc.Warnings)
	}
	t.Logf("%d sizes finished before the interrupt", len(doc.Sizes))
}

// TestSweepInterruptKeepsSizeUnderWay: Ctrl-C (the context is cancelled)
// during a size's second trial keeps its finished trial, marked
// interrupted, in the JSON's unfinished and in the text.
func TestSweepInterruptKeepsSizeUnderWay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sweeps over loopback; skipped with -short")
	}
	port := plainReflector(t)
	sweepCancelled := func(format ...string) (string, string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() {
			// 1 s trials: the first ends near 1 s, the second (its
			// confirmation) is under way when the context ends.
			done <- run(ctx, append([]string{"sweep", "127.0.0.1", "-p", port, "--mode", "reflect", "--max-rate", "2000pps", "--trial", "1s",
				"--sizes", "64,1000"}, format...), &out, &errb)
		}()
		time.Sleep(1600 * time.Millisecond)
		cancel()
		if code := <-done; code != exitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		return out.String(), errb.String()
	}
	js, progress := sweepCancelled("--json")
	var doc struct {
		Interrupted bool               `json:"interrupted"`
		Sizes       []result.SweepSize `json:"sizes"`
		Unfinished  *result.SweepSize  `json:"unfinished"`
		Warnings    []string           `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, js)
	}
	u := doc.Unfinished
	if !doc.Interrupted || len(doc.Sizes) != 0 || u == nil || !u.Interrupted || u.Size != 64 || len(u.TrialLog) == 0 {
		t.Fatalf("interrupted %v, %d sizes, unfinished %+v; progress:\n%s", doc.Interrupted, len(doc.Sizes), u, progress)
	}
	if !strings.Contains(strings.Join(doc.Warnings, "\n"), "64 B's search was under way: the ") {
		t.Errorf("warnings %q", doc.Warnings)
	}
	text, _ := sweepCancelled()
	t.Logf("text:\n%s", text)
	if !regexp.MustCompile(`(?m)^interrupted: 64 B, after \d+ trials?, its search not finished \(no result\): 2000/s \w+ \(delivered \d+/s, 1 s\)`).MatchString(text) {
		t.Errorf("the text does not show the interrupted size's trials")
	}
}
