package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// matrixWarnings are a matrix's warnings as its text says them: once per
// cause, where several cells carry the same one (the JSON keeps a line per
// cell, each prefixed with the cell), with the count and names of those
// cells; each line where its cause first came, the cells in table order.
// A failed cell's reason is said in its row, not again as a warning.
func matrixWarnings(m *result.Matrix) []string {
	order := map[string]int{} // cell name → its row in the table
	said := map[string]bool{} // "cell: failed: reason", as its row says it
	for i, c := range m.Cells {
		if _, ok := order[c.Name()]; !ok {
			order[c.Name()] = i
		}
		if c.Status == "failed" {
			said[c.Name()+": failed: "+c.Reason] = true
		}
	}
	type cause struct {
		text  string
		cells []string // nil: not a cell's warning
	}
	var causes []*cause
	byText := map[string]*cause{}
	for _, w := range m.Warnings {
		if said[w] {
			continue
		}
		name, text := cellOf(w, order)
		if name == "" {
			causes = append(causes, &cause{text: w})
			continue
		}
		c := byText[text]
		if c == nil {
			c = &cause{text: text}
			byText[text] = c
			causes = append(causes, c)
		}
		if !slices.Contains(c.cells, name) {
			c.cells = append(c.cells, name)
		}
	}
	out := make([]string, 0, len(causes))
	for _, c := range causes {
		switch len(c.cells) {
		case 0:
			out = append(out, c.text)
		case 1:
			out = append(out, c.cells[0]+": "+c.text)
		default:
			slices.SortStableFunc(c.cells, func(a, b string) int { return order[a] - order[b] })
			out = append(out, fmt.Sprintf("%d cells (%s): %s", len(c.cells), strings.Join(c.cells, ", "), c.text))
		}
	}
	return out
}

// cellOf splits a matrix warning into the cell it is prefixed with and
// its text; name is "" when it names no cell of the matrix.
func cellOf(w string, cells map[string]int) (name, text string) {
	for n := range cells {
		if t, ok := strings.CutPrefix(w, n+": "); ok && len(n) > len(name) {
			name, text = n, t
		}
	}
	return name, text
}
