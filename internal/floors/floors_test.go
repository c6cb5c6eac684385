package floors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/wirebench/wirebench"

// TestTreeKeepsItsFloors is the rule itself: every package of this module
// is placed in docs/architecture.md and imports only lower floors.
func TestTreeKeepsItsFloors(t *testing.T) {
	tab, err := ReadTable("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := Check("../..", module, tab)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}
}

const docHead = "# x\n\n## Floors\n\n```\n"

// TestBadImportIsCaught shows the message a deliberate violation gets: a
// bottom-floor package importing a floor-3 one, a package set apart
// imported from below the cli, and a package with no row.
func TestBadImportIsCaught(t *testing.T) {
	doc := docHead + "floor 6  internal/cli      x\nfloor 3  internal/session  x\nfloor 1  internal/units    x\n         internal/result   x\napart    internal/netlab   x\n```\n"
	tab, err := Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write := treeWriter(t, root)
	write("internal/units/units.go", "package units\nimport _ \""+module+"/internal/session\"\n")
	write("internal/units/units_test.go", "package units\nimport _ \""+module+"/internal/cli\"\n") // tests may
	write("internal/session/s.go", "package session\nimport (\n_ \""+module+"/internal/units\"\n_ \""+module+"/internal/netlab\"\n_ \"fmt\"\n)\n")
	write("internal/cli/cli.go", "package cli\nimport (\n_ \""+module+"/internal/session\"\n_ \""+module+"/internal/netlab\"\n)\n")
	write("internal/result/r.go", "package result\nimport _ \""+module+"/internal/units\"\n") // same floor
	write("internal/newthing/n.go", "package newthing\n")
	vs, err := Check(root, module, tab)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"internal/newthing/n.go: package internal/newthing has no floor: add it to the table in docs/architecture.md",
		"internal/result/r.go: internal/result (floor 1) imports internal/units (floor 1): a package may import only lower floors (docs/architecture.md)",
		"internal/session/s.go: internal/session (floor 3) imports internal/netlab, which is set apart: only floor 6 and above may (docs/architecture.md)",
		"internal/units/units.go: internal/units (floor 1) imports internal/session (floor 3): a package may import only lower floors (docs/architecture.md)",
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseRejectsBadTables(t *testing.T) {
	for name, doc := range map[string]string{
		"no section":   "# x\n",
		"empty":        docHead + "```\n",
		"twice":        docHead + "floor 1 internal/a\nfloor 2 internal/a\n```\n",
		"no floor yet": docHead + "   internal/a\n```\n",
		"garbage":      docHead + "floor one internal/a\n```\n",
	} {
		if _, err := Parse(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestFloorOfSubPackage(t *testing.T) {
	tab := Table{"internal/lab": 4, "internal/lab/model": 2, "internal/testutil": Apart}
	for pkg, want := range map[string]int{"internal/lab": 4, "internal/lab/model": 2, "internal/lab/other": 4, "internal/testutil/zshell": Apart} {
		if got, ok := tab.Floor(pkg); !ok || got != want {
			t.Errorf("Floor(%s) = %d, %v; want %d", pkg, got, ok, want)
		}
	}
	if _, ok := tab.Floor("internal/nowhere"); ok {
		t.Error("an unnamed package has a floor")
	}
}

// treeWriter returns a function writing a source file at rel below root,
// its directories made, for the synthetic trees the checks are shown on.
func treeWriter(t *testing.T, root string) func(rel, src string) {
	return func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
