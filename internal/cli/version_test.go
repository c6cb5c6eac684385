package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
