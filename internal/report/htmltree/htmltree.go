// Package htmltree renders a decoded JSON document as nested HTML tables,
// every number as the document wrote it: the "every figure of the
// document" part of wirebench's HTML report (docs/report.md).
package htmltree

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"sort"
	"strings"
)

// HTML renders a decoded JSON value as nested tables: an object as
// key/value rows, a list of objects as a table with a column per key, a
// list of scalars inline. Every number appears as the document wrote it.
func HTML(v any) template.HTML {
	var b strings.Builder
	writeTree(&b, v)
	return template.HTML(b.String()) // every text goes through html.EscapeString
}

func writeTree(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString(`<table class="kv">`)
		for _, k := range sortedKeys(x) {
			fmt.Fprintf(b, `<tr><th>%s</th><td>`, html.EscapeString(k))
			writeTree(b, x[k])
			b.WriteString("</td></tr>")
		}
		b.WriteString("</table>")
	case []any:
		writeList(b, x)
	default:
		b.WriteString(html.EscapeString(scalar(x)))
	}
}

func writeList(b *strings.Builder, xs []any) {
	if len(xs) == 0 {
		b.WriteString("[]")
		return
	}
	cols := map[string]bool{}
	for _, x := range xs {
		m, ok := x.(map[string]any)
		if !ok {
			parts := make([]string, len(xs))
			for i, x := range xs {
				var s strings.Builder
				writeTree(&s, x)
				parts[i] = s.String()
			}
			b.WriteString(strings.Join(parts, ", "))
			return
		}
		for k := range m {
			cols[k] = true
		}
	}
	keys := sortedKeys(cols)
	b.WriteString(`<table class="list"><tr><th>#</th>`)
	for _, k := range keys {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(k))
	}
	b.WriteString("</tr>")
	for i, x := range xs {
		fmt.Fprintf(b, "<tr><td>%d</td>", i)
		m := x.(map[string]any)
		for _, k := range keys {
			b.WriteString("<td>")
			if v, ok := m[k]; ok {
				writeTree(b, v)
			}
			b.WriteString("</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case json.Number:
		return x.String()
	case string:
		return x
	case bool:
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v)
}
