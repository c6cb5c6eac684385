package pscheduler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContribScripts checks that contrib/pscheduler-tool-wirebench has an
// executable script for every method, calling wirebench with that method.
func TestContribScripts(t *testing.T) {
	dir := filepath.Join("..", "..", "contrib", "pscheduler-tool-wirebench", "wirebench")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(Methods) {
		t.Errorf("%d files in %s, want one per method (%d)", len(entries), dir, len(Methods))
	}
	for _, m := range Methods {
		p := filepath.Join(dir, m)
		info, err := os.Stat(p)
		if err != nil {
			t.Errorf("method %s: %v", m, err)
			continue
		}
		if info.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", p)
		}
		b, _ := os.ReadFile(p)
		if !strings.HasPrefix(string(b), "#!/bin/sh\n") || !strings.Contains(string(b), " pscheduler "+m+" --config ") {
			t.Errorf("%s does not run wirebench pscheduler %s:\n%s", p, m, b)
		}
	}
}
