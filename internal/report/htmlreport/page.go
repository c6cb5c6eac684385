package htmlreport

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"sort"
	"strings"
)

// treeHTML renders a decoded JSON value as nested tables: an object as
// key/value rows, a list of objects as a table with a column per key, a
// list of scalars inline. Every number appears as the document wrote it.
func treeHTML(v any) template.HTML {
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

// pageTemplate is the whole page: inline CSS, inline SVG, no scripts and
// no URLs, so it opens with no network.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 70em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
.sub { color: #555; margin-top: -0.5em; }
.warn { background: #fff4e0; border-left: 4px solid #e69500; padding: 0.3em 0.8em; margin: 0.3em 0; }
figure.chart { margin: 1em 0; background: #fff; }
figure.chart svg { width: 100%; height: auto; display: block; }
figcaption { font-size: 0.9em; color: #555; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.85em; }
th, td { border: 1px solid #ddd; padding: 0.15em 0.5em; text-align: right; vertical-align: top; }
th { background: #f4f4f4; }
table.kv th { text-align: left; }
td:first-child, table.summary td:nth-child(-n+3) { text-align: left; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
details { margin: 0.5em 0; } summary { cursor: pointer; color: #245; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="sub">made by wirebench report at {{.Created.Format "2006-01-02 15:04:05 UTC"}} from {{len .Sections}} section(s)</p>
{{range .Sections}}<section class="doc" data-kind="{{.Kind}}">
<h2>{{.Name}}</h2>
{{if .Subtitle}}<p class="sub">{{.Subtitle}}</p>{{end}}
{{range .Lead}}{{template "table" .}}{{end}}{{range .Warnings}}<p class="warn">warning: {{.}}</p>
{{end}}{{range .Charts}}<figure class="chart" id="{{.ID}}">
{{svg .}}
<figcaption>{{.Title}}{{with .Caption}}: {{.}}{{end}}</figcaption>
</figure>
{{end}}{{with .Summary}}<table class="summary"><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{range .Tables}}{{template "table" .}}{{end}}{{if .Tree}}<details><summary>every figure of the document</summary>
{{.Tree}}
</details>{{end}}
</section>
{{end}}</body>
</html>
{{define "table"}}<table class="summary" data-table="{{.Name}}">{{with .Title}}<caption>{{.}}</caption>{{end}}<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{with .Warnings}}<details class="warnings" data-warnings="{{len .}}"><summary>{{len .}} warning(s) on these figures</summary>
{{range .}}<p class="warn">warning: {{.Text}}</p>
{{with .Detail}}<ul class="detail">{{range .}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{end}}</details>
{{end}}{{end}}`
