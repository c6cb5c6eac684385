// Package floors checks that every package of the module imports only
// packages on lower floors. The floors are not declared here: they are the
// table in docs/architecture.md, which this package parses, so the rule that
// maintainers read and the rule the tests enforce are one text. It also
// checks the size limits of the same document: lines per package, per file
// and per function.
package floors

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Apart is the floor of packages set apart from the product (the lab, test
// helpers, benchmarks): they may import any floor below the cli's, and only
// the cli's floor and above may import them.
const Apart = -1

// CLIPackage is the package whose floor is the lowest allowed to import a
// package set apart.
const CLIPackage = "internal/cli"

// cliFloor is the floor of CLIPackage in t (with no such row, no floored
// package may import a package set apart).
func (t Table) cliFloor() int {
	if f, ok := t[CLIPackage]; ok {
		return f
	}
	return int(^uint(0) >> 1)
}

// Table maps package paths (relative to the module, e.g. "internal/cli") to
// their floors. A package not named takes the floor of its nearest named
// parent directory.
type Table map[string]int

var rowRE = regexp.MustCompile(`^(?:floor\s+(\d+)|apart)?\s+((?:internal|cmd|bench)[A-Za-z0-9_/.-]*)(?:\s|$)`)

// Parse reads the first fenced block after the "## Floors" heading of an
// architecture document: lines "floor N  path  comment", "apart  path …",
// and continuation lines "         path  comment" that share the floor of
// the line above.
func Parse(r io.Reader) (Table, error) {
	lines, err := fencedBlock(r, "Floors", "floor table")
	if err != nil {
		return nil, err
	}
	t := Table{}
	cur, have := 0, false
	for _, line := range lines {
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("floor table line %q: want \"floor N  path\", \"apart  path\" or an indented path", line)
		}
		switch {
		case strings.HasPrefix(line, "floor"):
			n, _ := strconv.Atoi(m[1])
			cur, have = n, true
		case strings.HasPrefix(line, "apart"):
			cur, have = Apart, true
		case !have:
			return nil, fmt.Errorf("floor table line %q comes before any floor", line)
		}
		if _, dup := t[m[2]]; dup {
			return nil, fmt.Errorf("floor table names %s twice", m[2])
		}
		t[m[2]] = cur
	}
	if len(t) == 0 {
		return nil, fmt.Errorf("the floor table is empty")
	}
	return t, nil
}

// fencedBlock returns the non-blank lines of the first fenced block after
// the "## heading" heading of an architecture document (what names the
// table in errors).
func fencedBlock(r io.Reader, heading, what string) ([]string, error) {
	sc := bufio.NewScanner(r)
	inSection, inBlock := false, false
	var lines []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			inSection = strings.TrimSpace(line[3:]) == heading
		case !inSection:
		case strings.HasPrefix(line, "```"):
			if inBlock {
				return lines, nil
			}
			inBlock = true
		case inBlock && strings.TrimSpace(line) != "":
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the %s: %w", what, err)
	}
	return nil, fmt.Errorf("no \"## %s\" section with a fenced table", heading)
}

// Floor returns the floor of a package path, from its own row or its
// nearest parent's; ok is false when no row covers it.
func (t Table) Floor(pkg string) (floor int, ok bool) {
	for p := pkg; p != "." && p != ""; p = filepath.ToSlash(filepath.Dir(p)) {
		if f, ok := t[p]; ok {
			return f, true
		}
	}
	return 0, false
}

// Violation is one import that breaks the floors, or a package the table
// does not place.
type Violation struct {
	File    string // the importing file, relative to the module root
	Package string // the importing package
	Import  string // the imported package ("" for an unplaced package)
	Reason  string
	// Subject and Count are a size violation's package, file or
	// "file:function" and its line count (Limits.Splitting).
	Subject string
	Count   int
}

func (v Violation) String() string { return v.File + ": " + v.Reason }

// walkSources calls fn for every non-test Go file of the module rooted at
// root, with its path, its path relative to root and its package's
// (slash-separated); it skips hidden folders, testdata, vendor and
// node_modules.
func walkSources(root string, fn func(path, rel, pkg string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		return fn(path, rel, filepath.ToSlash(filepath.Dir(rel)))
	})
}

// Check walks the module rooted at root (module path modPath) and returns
// every violation, sorted by file. Test files are not checked: tests may
// use any helper.
func Check(root, modPath string, t Table) ([]Violation, error) {
	var out []Violation
	unplaced := map[string]bool{}
	err := walkSources(root, func(path, rel, pkg string) error {
		if pkg == "." {
			return nil
		}
		vs, err := checkFile(path, rel, pkg, modPath, t, unplaced)
		out = append(out, vs...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Import < out[j].Import
	})
	return out, nil
}

func checkFile(path, rel, pkg, modPath string, t Table, unplaced map[string]bool) ([]Violation, error) {
	from, ok := t.Floor(pkg)
	if !ok {
		if unplaced[pkg] {
			return nil, nil
		}
		unplaced[pkg] = true
		return []Violation{{File: rel, Package: pkg, Reason: fmt.Sprintf("package %s has no floor: add it to the table in docs/architecture.md", pkg)}}, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return nil, fmt.Errorf("reading the imports of %s: %w", rel, err)
	}
	var out []Violation
	for _, im := range f.Imports {
		ip, _ := strconv.Unquote(im.Path.Value)
		if !strings.HasPrefix(ip, modPath+"/") {
			continue
		}
		dep := strings.TrimPrefix(ip, modPath+"/")
		to, ok := t.Floor(dep)
		if !ok {
			continue // reported as unplaced where it is declared
		}
		if reason := judge(pkg, from, dep, to, t.cliFloor()); reason != "" {
			out = append(out, Violation{File: rel, Package: pkg, Import: dep, Reason: reason})
		}
	}
	return out, nil
}

// judge says why pkg (on floor from) may not import dep (on floor to), or
// "" when it may.
func judge(pkg string, from int, dep string, to, cli int) string {
	switch {
	case from == Apart && to == Apart:
		return ""
	case from == Apart && to >= cli:
		return fmt.Sprintf("%s (set apart) imports %s (floor %d): packages set apart may import floors below %d only (docs/architecture.md)", pkg, dep, to, cli)
	case from == Apart:
		return ""
	case to == Apart && from < cli:
		return fmt.Sprintf("%s (floor %d) imports %s, which is set apart: only floor %d and above may (docs/architecture.md)", pkg, from, dep, cli)
	case to == Apart:
		return ""
	case to >= from:
		return fmt.Sprintf("%s (floor %d) imports %s (floor %d): a package may import only lower floors (docs/architecture.md)", pkg, from, dep, to)
	}
	return ""
}

// ReadTable parses the floor table of the architecture document at path.
func ReadTable(path string) (Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the architecture document: %w", err)
	}
	defer f.Close()
	t, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
