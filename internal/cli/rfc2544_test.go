package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestRFC2544UsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"rfc2544"},
		{"rfc2544", "127.0.0.1", "--mode", "tcp"},
		{"rfc2544", "127.0.0.1", "--tests", "throughput,jitter"},
		{"rfc2544", "127.0.0.1", "--pdr", "0"},
		{"rfc2544", "127.0.0.1", "--pdr", "x"},
		{"rfc2544", "127.0.0.1", "--loads", "10,0"},
		{"rfc2544", "127.0.0.1", "--loads", "150"},
		{"rfc2544", "127.0.0.1", "--sizes", "8"},
		{"rfc2544", "127.0.0.1", "--medium", "eth7"},
		{"rfc2544", "127.0.0.1", "--trial", "0"},
		{"rfc2544", "127.0.0.1", "--max-burst", "1"},
		{"rfc2544", "127.0.0.1", "--json", "--csv"},
		{"rfc2544", "127.0.0.1", "--same-clock"}, // reflect: no server timing
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitUsage || !strings.HasPrefix(errb.String(), "wirebench: ") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errb.String())
		}
	}
}

// TestRFC2544Command runs the command against a plain reflector with short
// trials: the text report's four tables, the JSON document's keys, the
// CSV, progress with the time left on stderr, and the run in the results
// store under history --kind rfc2544.
func TestRFC2544Command(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark over loopback; skipped with -short")
	}
	port := plainReflector(t)
	db := filepath.Join(t.TempDir(), "results.db")
	base := []string{"rfc2544", "127.0.0.1", "-p", port, "--mode", "reflect", "--medium", "custom:20M,38", "--sizes", "512",
		"--trial", "300ms", "--confirm", "600ms", "--gap", "50ms", "--max-burst", "64", "--loads", "50", "--db", db}
	var out, errb bytes.Buffer
	if code := run(context.Background(), base, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	t.Logf("report:\n%s", out.String())
	for _, want := range []string{"Throughput", "Latency at load", "Frame loss rate", "Back-to-back frames", "NDR pkt/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(errb.String(), "rfc2544: throughput 512 B") || !strings.Contains(errb.String(), "left") {
		t.Errorf("no progress with the time left on stderr: %q", errb.String())
	}
	var hist bytes.Buffer
	if code := run(context.Background(), []string{"history", "--db", db, "--kind", "rfc2544"}, &hist, &errb); code != exitOK ||
		!strings.Contains(hist.String(), "rfc2544 reflect, 1 sizes") {
		t.Errorf("the run is not in the results store (exit %d): %s", code, hist.String())
	}

	out.Reset()
	if code := run(context.Background(), append(base, "--tests", "throughput,backtoback", "--json", "--no-save"), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Schema string           `json:"schema"`
		Kind   string           `json:"kind"`
		Sizes  []map[string]any `json:"sizes"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Schema != "wirebench/1" || doc.Kind != "rfc2544" || len(doc.Sizes) != 1 {
		t.Fatalf("JSON (%v): %s", err, out.String())
	}
	for _, k := range []string{"size", "ndr_pps", "pdr_pps", "ndr_bps", "latency", "loss_curve", "back_to_back_frames", "back_to_back_us"} {
		if _, ok := doc.Sizes[0][k]; !ok {
			t.Errorf("size lacks %q", k)
		}
	}
	if ndr, _ := doc.Sizes[0]["ndr_pps"].(float64); ndr <= 0 {
		t.Errorf("ndr_pps %v", doc.Sizes[0]["ndr_pps"])
	}
	// --verbose (-V) is the text report with each warning's detail: the
	// same tables, first.
	out.Reset()
	if code := run(context.Background(), append(base, "--tests", "backtoback", "-V", "--no-save"), &out, &errb); code != exitOK ||
		!strings.HasPrefix(out.String(), "RFC 2544 benchmark of 127.0.0.1") || !strings.Contains(out.String(), "\nBack-to-back frames") {
		t.Errorf("--verbose (exit %d):\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run(context.Background(), append(base, "--tests", "loss", "--csv", "--no-save"), &out, &errb); code != exitOK ||
		!strings.HasPrefix(out.String(), "test,size,point_percent,metric,value\n") || !strings.Contains(out.String(), "loss,512,100,loss_percent,") {
		t.Errorf("CSV (exit %d):\n%s", code, out.String())
	}
}
