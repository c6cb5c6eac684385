package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

func TestDiagnoseUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"diagnose"},
		{"diagnose", "127.0.0.1", "--mode", "tcp"},
		{"diagnose", "127.0.0.1", "--json", "--csv"},
		{"diagnose", "127.0.0.1", "--budget", "soon"},
		{"diagnose", "127.0.0.1", "--sizes", "8"},
		{"diagnose", "127.0.0.1", "--max-rate", "fast"},
		{"diagnose", "127.0.0.1", "--big-size", "70000"},
		{"diagnose", "127.0.0.1", "--label", "diagnose=x"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitUsage || !strings.HasPrefix(errb.String(), "wirebench: ") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errb.String())
		}
	}
}

// diagnose's --dut flags are sweep's, checked as sweep checks them.
func TestDiagnoseDUTUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "reflect", "--dut", "telnet:127.0.0.1:1"}, "not reflect"},
		{[]string{"--dut-shell", "zephry"}, `invalid --dut-shell "zephry"`},
		{[]string{"--dut", "telnet:127.0.0.1:1", "--dut-timeout", "0"}, "invalid --dut-timeout 0"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"diagnose", "127.0.0.1", "--no-save"}, c.args...)
		if code := run(context.Background(), args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error saying %q", args, code, errb.String(), c.want)
		}
	}
}

// TestDiagnoseCommand runs the command against a plain reflector with a
// small plan: the JSON document, and the diagnosis saved with its label.
func TestDiagnoseCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs over loopback; skipped with -short")
	}
	port := plainReflector(t)
	db := filepath.Join(t.TempDir(), "results.db")
	var out, errb bytes.Buffer
	args := []string{"diagnose", "127.0.0.1", "-p", port, "--mode", "reflect", "--sizes", "512,1024", "--max-rate", "2000pps",
		"--trial", "200ms", "--gap", "50ms", "--low-rate", "0", "--big-size", "0", "--db", db, "--json"}
	if code := run(context.Background(), args, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	var d result.Diagnosis
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if d.Kind != result.KindDiagnosis || d.Schema != result.Schema || len(d.Runs) < 4 || d.Verdict == "" || d.RunID == 0 ||
		!strings.HasPrefix(d.Test.LabelKey, "diagnose=") {
		t.Errorf("document %+v", d)
	}
	var hist bytes.Buffer
	if code := run(context.Background(), []string{"history", "--db", db, "--label", d.Test.LabelKey}, &hist, &errb); code != exitOK ||
		!strings.Contains(hist.String(), "diagnosis") {
		t.Errorf("the diagnosis is not in the store under its label (exit %d): %s", code, hist.String())
	}
}
