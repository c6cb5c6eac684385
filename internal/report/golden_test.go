package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// update rewrites the golden files: go test ./internal/report -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// renderText renders a scenario the way the CLI prints a test.
func renderText(t *testing.T, sc scenario) string {
	t.Helper()
	var buf bytes.Buffer
	tx := NewText(&buf, "1")
	if sc.listenPort != 0 {
		tx.Listening("", sc.listenPort)
	}
	tx.Header(sc.r.Test, sc.r.Role, sc.local, sc.peer)
	udp := sc.r.Test.Protocol == result.UDP
	lines := sc.lines
	if lines == nil {
		for _, in := range sc.r.Intervals {
			lines = append(lines, line{id: "1", in: in, receiving: sc.r.Test.Direction == result.DirReceive})
		}
	}
	for _, l := range lines {
		tx.Interval(l.id, l.in, udp, l.receiving)
	}
	tx.Summary(sc.r)
	if err := tx.Err(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func renderJSON(t *testing.T, sc scenario) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sc.r, sc.r.Role == "client"); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func renderCSV(t *testing.T, sc scenario) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCSVHeader(&buf); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&buf, sc.r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test ./internal/report -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestGolden(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			text := renderText(t, sc)
			golden(t, sc.name+".txt", text)
			golden(t, sc.name+".json", renderJSON(t, sc))
			golden(t, sc.name+".csv", renderCSV(t, sc))
			for _, s := range sc.mustShow {
				if !strings.Contains(text, s) {
					t.Errorf("text output lacks %q:\n%s", s, text)
				}
			}
		})
	}
}
