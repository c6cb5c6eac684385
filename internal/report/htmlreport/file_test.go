package htmlreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFile: the report lands at its path, readable by all, with no
// temporary file left beside it; into a missing directory it fails and
// writes nothing.
func TestWriteFile(t *testing.T) {
	r, err := Build("t", loadTestdata(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "r.html")
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 || fi.Size() == 0 {
		t.Fatalf("report file: %v, %v", fi, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the report", len(entries))
	}
	err = r.WriteFile(filepath.Join(dir, "missing", "r.html"))
	if err == nil || !strings.Contains(err.Error(), "writing the report") {
		t.Errorf("into a missing directory: %v", err)
	}
}
