package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/version"
)

// TestVersionFlags checks that iperf's ways of asking for the version
// (-v, --version, also after -s or -c HOST) print it and exit 0, as
// "wirebench version" does.
func TestVersionFlags(t *testing.T) {
	want := "wirebench " + version.String() + "\n"
	for _, args := range [][]string{
		{"version"},
		{"-v"},
		{"--version"},
		{"-s", "-v"},
		{"-c", "127.0.0.1", "-u", "--version"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d, want 0; stderr: %s", code, stderr.String())
			}
			if got := stdout.String(); got != want {
				t.Errorf("stdout %q, want %q", got, want)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr %q, want nothing", stderr.String())
			}
		})
	}
}
