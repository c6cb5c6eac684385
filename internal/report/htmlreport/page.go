package htmlreport

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
.note { background: #eef4fa; border-left: 4px solid #7a9cc0; padding: 0.3em 0.8em; margin: 0.3em 0; }
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
<p class="sub">made by wirebench report at {{.Created.Format "2006-01-02 15:04:05 UTC"}} from {{plural (len .Sections) "section"}}</p>
{{range .Sections}}<section class="doc" data-kind="{{.Kind}}">
<h2>{{.Name}}</h2>
{{if .Subtitle}}<p class="sub">{{.Subtitle}}</p>{{end}}
{{range .Lead}}{{template "table" .}}{{end}}{{range .Warnings}}<p class="warn">warning: {{.}}</p>
{{end}}{{range .Notes}}<p class="note">note: {{.}}</p>
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
{{with .Warnings}}<details class="warnings" data-warnings="{{len .}}"><summary>{{plural (len .) "warning"}} on these figures</summary>
{{range .}}<p class="warn">warning: {{.Text}}</p>
{{with .Detail}}<ul class="detail">{{range .}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{end}}</details>
{{end}}{{with .Notes}}<details class="notes" data-notes="{{len .}}"><summary>{{plural (len .) "note"}} on these figures</summary>
{{range .}}<p class="note">note: {{.Text}}</p>
{{with .Detail}}<ul class="detail">{{range .}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{end}}</details>
{{end}}{{end}}`
