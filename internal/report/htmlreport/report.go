package htmlreport

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"

	"github.com/wirebench/wirebench/internal/report/htmltree"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// Report is a built report: its sections and charts, ready to write as
// HTML or PNG.
type Report struct {
	Title    string
	Created  time.Time
	Sections []*Section
	charts   []*Chart
}

// Section is one document of the report (or the comparison of several).
type Section struct {
	Name     string
	Kind     string
	Subtitle string
	Warnings []string
	// Notes are said of figures that stand (a sweep's trials this host
	// spoiled, each run again until a clean one decided), after the
	// warnings.
	Notes  []string
	Charts []*Chart
	// Summary is the section's headline table.
	Summary *Table
	// Lead are the tables that open the section, before its warnings and
	// charts: what was found (an RFC 2544 run's table per test, each with
	// the warnings on its figures under it).
	Lead []*Table
	// Tables are further tables, each with its title.
	Tables []*Table
	// Tree is the whole document, every number in it, as nested tables.
	Tree template.HTML
}

// Table is a simple table of text cells.
type Table struct {
	// Name is the table's data-table attribute in the page; Title its
	// caption (both may be empty).
	Name, Title string
	Head        []string
	Rows        [][]string
	// Warnings qualify the table's figures: shown under it, collapsed.
	Warnings []Warning
	// Notes are said of figures that stand (trials this host spoiled,
	// each run again until a clean one decided): after the warnings,
	// collapsed too.
	Notes []Warning
}

// Warning is one cause of doubt over a table's figures, and what it sums
// up (each size's and trial's own words).
type Warning struct {
	Text   string
	Detail []string
}

// Build lays out a report of docs, in the order given. A document whose
// kind has no charts still gets its tables.
func Build(title string, docs []Document) (*Report, error) {
	r := &Report{Title: title, Created: time.Now().UTC()}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no documents to report")
	}
	if cmp, err := r.comparison(docs); err != nil {
		return nil, err
	} else if cmp != nil {
		r.Sections = append(r.Sections, cmp)
	}
	for _, d := range docs {
		s := &Section{Name: d.Name, Kind: d.Kind, Tree: htmltree.HTML(d.Tree)}
		var err error
		switch d.Kind {
		case "test":
			err = r.testSection(s, d)
		case "matrix":
			err = r.matrixSection(s, d)
		case "sweep":
			err = r.sweepSection(s, d)
		case "ping":
			err = r.pingSection(s, d)
		case "request-response":
			err = r.latencySection(s, d)
		case "under-load":
			err = r.underLoadSection(s, d)
		case "rfc2544":
			err = r.rfc2544Section(s, d)
		case result.KindDiagnosis:
			err = r.diagnosisSection(s, d)
		default:
			s.Subtitle = "no chart for kind " + strconv.Quote(d.Kind) + ": every figure is in the table below"
		}
		if err != nil {
			return nil, err
		}
		r.Sections = append(r.Sections, s)
	}
	return r, nil
}

// Charts lists every chart of the report, in page order.
func (r *Report) Charts() []*Chart { return r.charts }

// add makes a chart of p (nil: nothing to draw) and puts it in s.
func (r *Report) add(s *Section, title string, p *plot.Plot, err error) error {
	return r.addNoted(s, title, "", p, err)
}

// addNoted is add with a caption saying what the chart cannot show.
func (r *Report) addNoted(s *Section, title, caption string, p *plot.Plot, err error) error {
	if err != nil {
		return err
	}
	if p == nil {
		return nil
	}
	c := &Chart{ID: fmt.Sprintf("chart-%02d-%s", len(r.charts)+1, slug(s.Name+" "+title)), Title: title, Caption: caption, p: p}
	r.charts = append(r.charts, c)
	s.Charts = append(s.Charts, c)
	return nil
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	s = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	return s
}

func mbps(v float64) string { return fmt.Sprintf("%.3f", v/1e6) }

func optNum(v *float64, format string) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf(format, *v)
}

func (r *Report) testSection(s *Section, d Document) error {
	var t result.Result
	if err := d.view(&t); err != nil {
		return err
	}
	s.Subtitle = fmt.Sprintf("%s, %s %s %s %s:%d, %s dialect", t.Role, strings.ToUpper(t.Test.Protocol), t.Test.Direction,
		map[bool]string{true: "from", false: "to"}[t.Role == "server"], t.Test.Host, t.Test.Port, t.Test.Dialect)
	s.Warnings = append(warningsOf(t.Warnings), errorOf(t.Error)...)
	s.Summary = testSummary(&t)
	p, note, err := throughputPlot(&t)
	return r.addNoted(s, "Throughput over time", note, p, err)
}

func testSummary(t *result.Result) *Table {
	tb := &Table{Head: []string{"flow", "Mbit/s", "bytes", "packets", "lost", "jitter (ms)", "% of line"}}
	line := "–"
	if t.Link != nil {
		line = fmt.Sprintf("%.2f (%s)", t.Link.PercentOfTheoretical, t.Link.Medium)
		if t.Link.Status != "" && t.Link.Status != "ok" {
			line += " " + strings.ToUpper(t.Link.Status) // above what the medium allows
		}
	}
	udp := t.Test.Protocol == "udp"
	if f := t.Sender; f != nil {
		tb.Rows = append(tb.Rows, []string{"sender", mbps(f.BitsPerSecond), strconv.FormatInt(f.Bytes, 10), strconv.FormatInt(f.Packets, 10), "–", "–", "–"})
	}
	row := func(name string, f *result.Receiver, line string) {
		if f == nil {
			return
		}
		lost, jitter := "–", "–"
		if udp {
			lost, jitter = strconv.FormatInt(f.Lost, 10), fmt.Sprintf("%.3f", f.JitterMS)
		}
		tb.Rows = append(tb.Rows, []string{name, mbps(f.BitsPerSecond), strconv.FormatInt(f.Bytes, 10), strconv.FormatInt(f.Packets, 10), lost, jitter, line})
	}
	row("receiver", t.Receiver, line)
	if t.Reverse != nil {
		row("reverse receiver", t.Reverse.Receiver, "–")
	}
	return tb
}

func (r *Report) matrixSection(s *Section, d Document) error {
	var m result.Matrix
	if err := d.view(&m); err != nil {
		return err
	}
	s.Subtitle = fmt.Sprintf("matrix against %s:%d, %s dialect", m.Host, m.Port, m.Dialect)
	s.Subtitle += mediumSuffix(m.Medium)
	s.Warnings = append(warningsOf(m.Warnings), errorOf(m.Error)...)
	s.Summary = &Table{Head: []string{"protocol", "direction", "method", "Mbit/s", "loss %", "jitter (ms)", "% of line", "basis", "status", "reason"}}
	var labels []string
	var values []float64
	for _, c := range m.Cells {
		dir := c.Direction
		if c.Simultaneous {
			dir += " (bidir)"
		}
		bpsText := "–"
		if c.BitsPerSecond != nil {
			bpsText = mbps(*c.BitsPerSecond)
		}
		if c.BitsPerSecond != nil && c.Status != "failed" { // a failed cell's partial figure is no result to compare
			labels = append(labels, strings.ToUpper(c.Protocol)+" "+shortDir(c))
			values = append(values, *c.BitsPerSecond/1e6)
		}
		s.Summary.Rows = append(s.Summary.Rows, []string{c.Protocol, dir, c.Method, bpsText, optNum(c.LossPercent, "%.3f"),
			optNum(c.JitterMS, "%.3f"), optNum(c.PercentOfLine, "%.2f"), c.Basis, c.Status, c.Reason})
	}
	if len(values) > 0 {
		p, err := barsChart("Goodput per cell", "Mbit/s", labels, []bars{{name: d.Name, values: values}})
		if err := r.add(s, "Goodput per cell", p, err); err != nil {
			return err
		}
	}
	for _, ch := range matrixTimeCharts(&m) {
		p, err := linesChart(ch.title, "time since the cell's own start (s)", "Mbit/s", ch.ss)
		if err := r.addNoted(s, ch.title, ch.note, p, err); err != nil {
			return err
		}
	}
	return nil
}

func shortDir(c result.MatrixCell) string {
	d := map[string]string{"upload": "up", "download": "down"}[c.Direction]
	if d == "" {
		d = c.Direction
	}
	if c.Simultaneous {
		d += " bidir"
	}
	return d
}

func (r *Report) pingSection(s *Section, d Document) error {
	var pv result.Ping
	if err := d.view(&pv); err != nil {
		return err
	}
	if pv.PingRun == nil { // a document with none of a run's keys
		pv.PingRun = &result.PingRun{}
	}
	s.Subtitle = "ping " + pv.Target
	s.Warnings = warningsOf(pv.Warnings)
	pc := buildPingCharts(&pv)
	s.Summary = &Table{Head: append([]string{"size (B)", "sent", "received", "loss %", "min", "p50", "p90", "p99", "max (ms)"}, pc.head...)}
	i := 0
	for _, z := range pv.Sizes {
		if z == nil {
			continue
		}
		row := []string{strconv.Itoa(z.Size), strconv.Itoa(z.Sent), strconv.Itoa(z.Received), fmt.Sprintf("%.2f", z.LossPct)}
		for _, v := range []time.Duration{z.RTT.Min, z.RTT.P50, z.RTT.P90, z.RTT.P99, z.RTT.Max} {
			row = append(row, fmt.Sprintf("%.3f", msOf(v)))
		}
		s.Summary.Rows = append(s.Summary.Rows, append(row, pc.cells[i]...))
		i++
	}
	p, err := pc.rttChart()
	if err := r.addNoted(s, "RTT", pc.rttNote, p, err); err != nil {
		return err
	}
	if len(pc.rate) == 0 {
		return nil
	}
	p, err = linesChart("Implied rate by payload size against the medium", "ICMP payload (bytes)", "Mbit/s", pc.rate)
	return r.addNoted(s, "Implied rate", pc.rateNote, p, err)
}

func rttRow(name string, x result.RTTSummary) []string {
	return []string{name, strconv.FormatInt(x.Count, 10), fmt.Sprintf("%.3f", x.Min), fmt.Sprintf("%.3f", x.P50),
		fmt.Sprintf("%.3f", x.P99), fmt.Sprintf("%.3f", x.Max)}
}

var rttHead = []string{"", "count", "min", "p50", "p99", "max (ms)"}

func (r *Report) latencySection(s *Section, d Document) error {
	var l result.Latency
	if err := d.view(&l); err != nil {
		return err
	}
	s.Subtitle = fmt.Sprintf("%s request/response latency to %s", l.Test.Proto, l.Test.Peer)
	s.Warnings = append(warningsOf(l.Warnings), errorOf(l.Error)...)
	s.Summary = &Table{Head: rttHead, Rows: [][]string{rttRow("rtt", l.RTT)}}
	p, err := histChart("RTT distribution", []string{"rtt"}, [][]result.RTTBin{l.RTT.Bins})
	return r.add(s, "RTT distribution", p, err)
}

func (r *Report) underLoadSection(s *Section, d Document) error {
	var u result.UnderLoad
	if err := d.view(&u); err != nil {
		return err
	}
	s.Subtitle = fmt.Sprintf("latency under load: %s probe to %s", u.Probe.Proto, u.Probe.Peer)
	s.Warnings = append(warningsOf(u.Warnings), errorOf(u.Error)...)
	s.Summary = &Table{Head: rttHead, Rows: [][]string{rttRow("idle", u.Idle.RTT), rttRow("loaded", u.Loaded.RTT)}}
	p, err := histChart("RTT distribution, idle and under load", []string{"idle", "loaded"}, [][]result.RTTBin{u.Idle.RTT.Bins, u.Loaded.RTT.Bins})
	if err := r.add(s, "RTT distribution", p, err); err != nil {
		return err
	}
	if u.Throughput == nil {
		return nil
	}
	s.Warnings = append(s.Warnings, warningsOf(u.Throughput.Warnings)...)
	p, note, err := throughputPlot(u.Throughput)
	return r.addNoted(s, "Throughput over time", note, p, err)
}

func percentOf(v, base float64) string {
	if base <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", 100*v/base)
}

func warningsOf(ws []string) []string { return append([]string(nil), ws...) }

func errorOf(e string) []string {
	if e == "" {
		return nil
	}
	return []string{"ended early: " + e}
}

// WritePNGs writes each chart as DIR/ID.png and returns the paths.
func (r *Report) WritePNGs(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the PNG directory: %w", err)
	}
	var paths []string
	for _, c := range r.charts {
		b, err := c.PNG()
		if err != nil {
			return paths, err
		}
		path := filepath.Join(dir, c.ID+".png")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return paths, fmt.Errorf("writing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// WriteHTML writes the report as one self-contained HTML page.
func (r *Report) WriteHTML(w io.Writer) error {
	svgs := map[*Chart]template.HTML{}
	for _, c := range r.charts {
		b, err := c.SVG()
		if err != nil {
			// One chart that cannot be drawn does not lose the page: it
			// says so where the chart would be; the tables hold the figures.
			svgs[c] = template.HTML(`<p class="warn">` + html.EscapeString(err.Error()) + `</p>`)
			continue
		}
		svgs[c] = template.HTML(b) // gonum escapes every text it draws
	}
	t, err := template.New("report").Funcs(template.FuncMap{"svg": func(c *Chart) template.HTML { return svgs[c] }, "plural": units.Plural[int]}).Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("parsing the page template: %w", err)
	}
	if err := t.Execute(w, r); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// mediumSuffix is ", medium NAME" for a section's subtitle, "" when no
// medium was named.
func mediumSuffix(medium string) string {
	if medium == "" {
		return ""
	}
	return ", medium " + medium
}
