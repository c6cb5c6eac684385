package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestLabBadModel: a malformed model is one clear error line and exit 2,
// before any socket is opened.
func TestLabBadModel(t *testing.T) {
	for _, m := range []string{"loss=2", "tick=7", "buffer=-1", "service=5000,buffer=-1", "colour=red", "loss=1%,"} {
		for _, cmd := range [][]string{{"relay", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:9"}, {"reflect", "-B", "127.0.0.1", "-p", "0"}} {
			var out, errb bytes.Buffer
			code := run(context.Background(), append(cmd, "--model", m), &out, &errb)
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			if code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], "model") || out.Len() != 0 {
				t.Errorf("%s --model %s: exit %d, stderr %q, stdout %q", cmd[0], m, code, errb.String(), out.String())
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"relay", "--listen", "127.0.0.1:0"}, &out, &errb); code != exitUsage {
		t.Errorf("relay without --to: exit %d, %q", code, errb.String())
	}
}

// TestReflectDurationJSON runs the reflector for a bounded time and checks
// the closing JSON document.
func TestReflectDurationJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"reflect", "-B", "127.0.0.1", "-p", "0", "--duration", "200ms", "--json", "--model", "loss=1%,seed=3"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if doc["schema"] != "wirebench/1" || doc["kind"] != "reflect" || doc["seed"] != float64(3) || doc["duration_s"].(float64) < 0.19 {
		t.Errorf("document %v", doc)
	}
	if _, ok := doc["datagrams"].(map[string]any)["in"]; !ok {
		t.Errorf("no datagrams.in: %v", doc)
	}
}
