package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runPScheduler runs "wirebench pscheduler args…" with input on stdin.
func runPScheduler(t *testing.T, input string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(&env{ctx: context.Background(), stdout: &out, stderr: &errOut})
	root.SetIn(strings.NewReader(input))
	root.SetArgs(append([]string{"pscheduler"}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestPSchedulerCommand(t *testing.T) {
	noConfig := filepath.Join(t.TempDir(), "absent.conf")
	out, err := runPScheduler(t, "", "enumerate", "--config", noConfig)
	var e map[string]any
	if err != nil || json.Unmarshal([]byte(out), &e) != nil || e["name"] != "wirebench" {
		t.Fatalf("enumerate: %v\n%s", err, out)
	}
	out, err = runPScheduler(t, `{"type":"rtt","spec":{"dest":"127.0.0.1","count":3}}`, "duration", "--config", noConfig)
	if err != nil || strings.TrimSpace(out) != "{\n  \"duration\": \"PT6S\"\n}" {
		t.Errorf("duration: %v %q", err, out)
	}
	// The configuration's device dialect reaches can-run.
	conf := filepath.Join(t.TempDir(), "wirebench.conf")
	os.WriteFile(conf, []byte(`{"devices":[{"dest":"198.18.0.7","dialect":"raw"}]}`), 0o644)
	out, err = runPScheduler(t, `{"type":"throughput","spec":{"dest":"198.18.0.7","single-ended":true,"reverse":true}}`, "can-run", "--config", conf)
	if err != nil || !strings.Contains(out, `"can-run": false`) || !strings.Contains(out, "configured as raw") {
		t.Errorf("can-run with a raw device: %v\n%s", err, out)
	}
	if _, err := runPScheduler(t, "", "bogus", "--config", noConfig); !isUsage(err) {
		t.Errorf("an unknown method: %v, want a usage error", err)
	}
	os.WriteFile(conf, []byte(`{"devices":[{"dest":"x","dialect":"zperf9"}]}`), 0o644)
	if _, err := runPScheduler(t, "", "enumerate", "--config", conf); err == nil || !strings.Contains(err.Error(), "zperf9") {
		t.Errorf("a bad configuration: %v", err)
	}
	if _, err := runPScheduler(t, "not json", "can-run", "--config", noConfig); err == nil {
		t.Error("can-run accepted input that is not JSON")
	}
}

func isUsage(err error) bool {
	_, ok := err.(usageError)
	return ok
}
