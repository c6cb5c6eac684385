package floors

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Limits are the size rules of the "## Sizes" section of docs/architecture.md:
// lines of non-test, non-generated Go code per package, per file and per
// function body.
type Limits struct {
	Package  int            // lines per package
	Packages map[string]int // packages with their own limit, by path relative to the module
	File     int            // lines per file
	Func     int            // lines per function body, unless its doc comment says "Long because …"
	// Splitting lists what is over its limit and being split, with the
	// count it may not exceed, by subject (Violation.Subject): the rule
	// holds everywhere else, and a listed subject may only shrink.
	Splitting map[string]int
}

// SizesDoc names the document the size rules come from, for messages.
const SizesDoc = "docs/architecture.md"

var (
	overRowRE  = regexp.MustCompile(`^over\s+(\S+)\s+(\d+)\s*$`)
	sizeRowRE  = regexp.MustCompile(`^(package|file|function)\s+(?:((?:internal|cmd|bench)[A-Za-z0-9_/.-]*)\s+)?(\d+)\s+lines(?:\s|$)`)
	longBecRE  = regexp.MustCompile(`(?:^|[.!?:]\s+)Long because\s+\S`)
	spaceRunRE = regexp.MustCompile(`\s+`)
)

// ParseLimits reads the first fenced block after the "## Sizes" heading of an
// architecture document: lines "package N lines …", "package PATH N lines …",
// "file N lines …" and "function N lines …". All three general limits must
// be there.
func ParseLimits(r io.Reader) (Limits, error) {
	lines, err := fencedBlock(r, "Sizes", "size table")
	if err != nil {
		return Limits{}, err
	}
	l := Limits{Packages: map[string]int{}, Splitting: map[string]int{}}
	for _, line := range lines {
		if m := overRowRE.FindStringSubmatch(line); m != nil {
			n, err := strconv.Atoi(m[2])
			if err != nil || n <= 0 {
				return Limits{}, fmt.Errorf("size table line %q: bad line count", line)
			}
			l.Splitting[m[1]] = n
			continue
		}
		m := sizeRowRE.FindStringSubmatch(line)
		if m == nil {
			return Limits{}, fmt.Errorf("size table line %q: want \"package|file|function [path] N lines …\"", line)
		}
		n, err := strconv.Atoi(m[3])
		if err != nil || n <= 0 {
			return Limits{}, fmt.Errorf("size table line %q: bad line count", line)
		}
		switch {
		case m[2] != "" && m[1] != "package":
			return Limits{}, fmt.Errorf("size table line %q: only a package limit may name a path", line)
		case m[2] != "":
			l.Packages[m[2]] = n
		case m[1] == "package":
			l.Package = n
		case m[1] == "file":
			l.File = n
		default:
			l.Func = n
		}
	}
	if l.Package <= 0 || l.File <= 0 || l.Func <= 0 {
		return Limits{}, fmt.Errorf("the size table needs a package, a file and a function limit")
	}
	return l, nil
}

// ReadLimits parses the size table of the architecture document at path.
func ReadLimits(path string) (Limits, error) {
	f, err := os.Open(path)
	if err != nil {
		return Limits{}, fmt.Errorf("opening the architecture document: %w", err)
	}
	defer f.Close()
	l, err := ParseLimits(f)
	if err != nil {
		return Limits{}, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// packageLimit is the line limit of package pkg.
func (l Limits) packageLimit(pkg string) int {
	if n, ok := l.Packages[pkg]; ok {
		return n
	}
	return l.Package
}

// CheckSizes walks the module rooted at root and returns every package, file
// and function over its limit: packages first, then files and functions by
// file. Test files and generated files ("Code generated … DO NOT EDIT") are
// not counted.
func CheckSizes(root string, l Limits) ([]Violation, error) {
	var out []Violation
	pkgLines := map[string]int{}
	err := walkSources(root, func(path, rel, pkg string) error {
		src, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", rel, err)
		}
		n, vs, err := checkFileSize(rel, src, l)
		pkgLines[pkg] += n
		out = append(out, vs...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].File < out[j].File })
	var pkgs []Violation
	for pkg, n := range pkgLines {
		if max := l.packageLimit(pkg); n > max {
			pkgs = append(pkgs, Violation{File: pkg, Package: pkg, Subject: pkg, Count: n,
				Reason: fmt.Sprintf("package of %d non-test lines, more than %d (%s)", n, max, SizesDoc)})
		}
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].File < pkgs[j].File })
	return l.ratchet(append(pkgs, out...)), nil
}

// ratchet keeps of vs what the Splitting list does not excuse: a listed
// subject within its listed count is left out, one that grew past it is
// kept and says so, and a listed subject no longer over its limit is a
// violation of its own (take it off the list, so that it stays within).
func (l Limits) ratchet(vs []Violation) []Violation {
	var out []Violation
	seen := map[string]bool{}
	for _, v := range vs {
		n, listed := l.Splitting[v.Subject]
		seen[v.Subject] = listed
		switch {
		case !listed:
			out = append(out, v)
		case v.Count > n:
			v.Reason += fmt.Sprintf("; it is listed as being split at %d and may only shrink", n)
			out = append(out, v)
		}
	}
	var gone []string
	for subj := range l.Splitting {
		if !seen[subj] {
			gone = append(gone, subj)
		}
	}
	sort.Strings(gone)
	for _, subj := range gone {
		out = append(out, Violation{File: subj, Subject: subj,
			Reason: fmt.Sprintf("listed as over its limit and being split, but it is within it now: take it off the list (%s)", SizesDoc)})
	}
	return out
}

// checkFileSize counts the lines of one Go file named rel and reports the
// file and each of its functions over their limits. A generated file counts
// for nothing.
func checkFileSize(rel string, src []byte, l Limits) (lines int, out []Violation, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
	if err != nil {
		return 0, nil, fmt.Errorf("parsing %s: %w", rel, err)
	}
	if ast.IsGenerated(f) {
		return 0, nil, nil
	}
	pkg := filepath.ToSlash(filepath.Dir(rel))
	lines = countLines(src)
	if lines > l.File {
		out = append(out, Violation{File: rel, Package: pkg, Subject: rel, Count: lines,
			Reason: fmt.Sprintf("%d lines, more than %d (%s)", lines, l.File, SizesDoc)})
	}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		n := fset.Position(fd.Body.Rbrace).Line - fset.Position(fd.Body.Lbrace).Line + 1
		if n <= l.Func || saysLongBecause(fd.Doc) {
			continue
		}
		out = append(out, Violation{File: rel, Package: pkg, Subject: rel + ":" + funcName(fd), Count: n,
			Reason: fmt.Sprintf("func %s: %d lines, more than %d, and its doc comment has no sentence \"Long because …\" (%s)", funcName(fd), n, l.Func, SizesDoc)})
	}
	return lines, out, nil
}

// countLines counts lines the way an editor numbers them: a last line
// without a newline still counts.
func countLines(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// saysLongBecause reports whether a doc comment has a sentence that starts
// "Long because" and goes on to say something.
func saysLongBecause(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	text := strings.TrimSpace(spaceRunRE.ReplaceAllString(doc.Text(), " "))
	return longBecRE.MatchString(text)
}

// funcName spells a function as its declaration does: "Name" or
// "(*Recv).Name".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + star + id.Name + ")." + fd.Name.Name
	}
	return fd.Name.Name
}
