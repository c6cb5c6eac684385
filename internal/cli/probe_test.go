package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// TestProbeClosedPort: probing a port where nothing listens prints a clear
// "nothing answered" result and exits 0, in text and in JSON.
func TestProbeClosedPort(t *testing.T) {
	port := strconv.Itoa(loopback.FreePort(t))
	tests := []struct {
		name string
		args []string
	}{
		{"text", []string{"probe", "127.0.0.1", "-p", port}},
		{"json", []string{"probe", "127.0.0.1", "-p", port, "--json", "--timeout", "200ms"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errOut)
			if code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut.String())
			}
			if tc.name == "text" {
				if !strings.HasPrefix(out.String(), "nothing answered on 127.0.0.1 port "+port) {
					t.Errorf("output %q", out.String())
				}
				return
			}
			var r result.Probe
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("bad JSON %q: %v", out.String(), err)
			}
			if r.Schema != "wirebench/1" || r.Kind != "probe" || r.Answered || len(r.Dialects) != 0 || !strings.Contains(r.Summary, "nothing answered") {
				t.Errorf("result %+v", r)
			}
		})
	}
}

func TestProbeUsageErrors(t *testing.T) {
	tests := [][]string{
		{"probe"},
		{"probe", "127.0.0.1", "-p", "70000"},
		{"probe", "127.0.0.1", "--timeout", "5s"},
		{"probe", "127.0.0.1", "--timeout", "0s"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, &out, &errOut); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, errOut.String())
			}
		})
	}
}
