package units

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// parenPlural is "test(s)", "byte(s)": a count written as no one writes it.
var parenPlural = regexp.MustCompile(`[A-Za-z]\(s\)`)

// TestNoParenthesisedPlurals: no string the module's code prints says
// "N warning(s)": a count is written as people write it ("1 warning",
// "2 warnings": Plural).
func TestNoParenthesisedPlurals(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && parenPlural.MatchString(lit.Value) {
				t.Errorf("%s: %s: write the count with Plural", fset.Position(lit.Pos()), parenPlural.FindString(lit.Value))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
