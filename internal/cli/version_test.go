package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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

// gen-docs writes a man page per command of the real tree, from its own
// help: the client's page carries its flags and examples.
func TestGenDocs(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"gen-docs", dir}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, c := range newRootCmd(&env{}).Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "man", "wirebench-"+c.Name()+".1")); err != nil {
			t.Errorf("no man page for %s: %v", c.Name(), err)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "man", "wirebench-client.1"))
	if err != nil {
		t.Fatal(err)
	}
	client := newClientCmd(&env{})
	for _, want := range []string{"--udp", strings.Split(strings.TrimSpace(client.Example), "\n")[0]} {
		if !strings.Contains(string(page), strings.TrimSpace(want)) {
			t.Errorf("wirebench-client.1 lacks %q", want)
		}
	}
}
