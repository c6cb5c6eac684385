package htmlreport

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// pageCharts is what the browser reads of every section: its tables, and
// its charts' series and texts as laid out.
type pageCharts struct {
	Sections []struct {
		Kind, Name string
		Tables     []struct {
			Name string
			Head []string
			Rows [][]string
		}
		Charts []struct {
			ID, Caption string
			Bars        int
			Series      []struct{ Name, Role, Points string }
		}
	}
	// Outside lists every text of a chart whose box, in its SVG's user
	// space, leaves the SVG's viewBox.
	Outside []struct {
		Chart, Text        string
		X, Y, W, H, VW, VH float64
	}
	Texts int // the texts measured
}

// readPageCharts measures every <text> of every chart's SVG by its
// getBBox() carried into the SVG's own user space (through the text's
// and its groups' transforms), against the viewBox, and reads every
// section's tables and the series hooks of its charts.
const readPageCharts = `(() => {
  const outside = [];
  let texts = 0;
  for (const fig of document.querySelectorAll("figure.chart")) {
    const svg = fig.querySelector("svg");
    const vb = svg.viewBox.baseVal;
    const toSVG = svg.getScreenCTM().inverse();
    for (const t of svg.querySelectorAll("text")) {
      if (t.textContent.trim() === "") continue;
      texts++;
      const b = t.getBBox();
      const m = toSVG.multiply(t.getScreenCTM());
      const pts = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]].map(([x, y]) => {
        const p = svg.createSVGPoint(); p.x = x; p.y = y; return p.matrixTransform(m); });
      const x0 = Math.min(...pts.map(p => p.x)), x1 = Math.max(...pts.map(p => p.x));
      const y0 = Math.min(...pts.map(p => p.y)), y1 = Math.max(...pts.map(p => p.y));
      if (x0 < vb.x - 0.5 || y0 < vb.y - 0.5 || x1 > vb.x + vb.width + 0.5 || y1 > vb.y + vb.height + 0.5) {
        outside.push({Chart: fig.id, Text: t.textContent, X: x0, Y: y0, W: x1 - x0, H: y1 - y0, VW: vb.width, VH: vb.height});
      }
    }
  }
  const sections = Array.from(document.querySelectorAll("section.doc")).map(s => ({
    Kind: s.dataset.kind, Name: s.querySelector("h2").textContent,
    Tables: Array.from(s.querySelectorAll(":scope > table.summary")).map(tb => {
      const rows = Array.from(tb.querySelectorAll("tr")).map(r => Array.from(r.cells).map(c => c.textContent));
      return {Name: tb.dataset.table || "", Head: rows[0] || [], Rows: rows.slice(1)};
    }),
    Charts: Array.from(s.querySelectorAll("figure.chart")).map(f => ({ID: f.id, Caption: f.querySelector("figcaption").textContent,
      Bars: f.querySelectorAll("g.wb-bar").length,
      Series: Array.from(f.querySelectorAll("g.wb-series")).map(g => ({Name: g.dataset.series, Role: g.dataset.role, Points: g.dataset.points}))})),
  }));
  return {Sections: sections, Outside: outside, Texts: texts};
})()`

// TestReportChartsShowTheTablesInChromium is issue 35's "a Chromium test
// of the report: every chart's SVG has data in every series the table
// has, and no title or label extends outside its SVG's viewBox", on the
// recorded documents of a matrix with -r (iperf2-legacy: the download
// cells run after the forward test), a ping ladder with --medium, an RFC
// 2544 run and a client run.
func TestReportChartsShowTheTablesInChromium(t *testing.T) {
	bin := chromiumPath(t)
	if testing.Short() {
		t.Skip("starting a browser takes seconds; skipped with -short")
	}
	var docs []Document
	for _, name := range []string{"matrix-tradeoff.json", "ping-ladder.json", "rfc2544.json", "client.json"} {
		docs = append(docs, loadDoc(t, name))
	}
	_, page := buildHTML(t, docs)
	bctx, _ := openInChromium(t, bin, page, func(any) {})
	got, err := chromedp.Run(bctx, chromedp.Evaluate[pageCharts](readPageCharts))
	if err != nil {
		t.Fatalf("reading the charts: %v", err)
	}
	if got.Texts < 20 {
		t.Fatalf("only %d texts measured in the charts", got.Texts)
	}
	for _, o := range got.Outside {
		t.Errorf("%s: text %q spans x %.1f–%.1f, y %.1f–%.1f, outside its viewBox 0–%.1f × 0–%.1f",
			o.Chart, o.Text, o.X, o.X+o.W, o.Y, o.Y+o.H, o.VW, o.VH)
	}
	if len(got.Sections) != 4 {
		t.Fatalf("%d sections, want 4", len(got.Sections))
	}
	for _, s := range got.Sections {
		for _, c := range s.Charts {
			for _, se := range c.Series {
				if len(pagePoints(t, se.Points)) == 0 {
					t.Errorf("%s: series %q has no points", c.ID, se.Name)
				}
			}
			if len(c.Series) == 0 && c.Bars == 0 {
				t.Errorf("%s draws no series and no bar", c.ID)
			}
		}
	}
	checkMatrixInBrowser(t, got.Sections[0])
	checkPingInBrowser(t, got.Sections[1])
	checkRFC2544InBrowser(t, got.Sections[2])
	checkClientInBrowser(t, got.Sections[3])
}

type pageSection = struct {
	Kind, Name string
	Tables     []struct {
		Name string
		Head []string
		Rows [][]string
	}
	Charts []struct {
		ID, Caption string
		Bars        int
		Series      []struct{ Name, Role, Points string }
	}
}

type xy struct{ x, y float64 }

func pagePoints(t *testing.T, s string) []xy {
	t.Helper()
	var out []xy
	for _, f := range strings.Fields(s) {
		a, b, ok := strings.Cut(f, ",")
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("point %q of %q", f, s)
		}
		out = append(out, xy{x, y})
	}
	return out
}

// stepMean is the time-weighted mean of a step series (pairs of points
// at an interval's start and end).
func stepMean(pts []xy) float64 {
	var area, span float64
	for i := 0; i+1 < len(pts); i += 2 {
		d := pts[i+1].x - pts[i].x
		area += d * pts[i].y
		span += d
	}
	if span == 0 {
		return 0
	}
	return area / span
}

func col(t *testing.T, head []string, name string) int {
	t.Helper()
	for i, h := range head {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %q in %q", name, head)
	return -1
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimLeft(s, "≥≤ ")), 64)
	if err != nil {
		t.Fatalf("cell %q is no number", s)
	}
	return v
}

// pointAt is the y of the series' point at x.
func pointAt(pts []xy, x float64) (float64, bool) {
	for _, p := range pts {
		if p.x == x {
			return p.y, true
		}
	}
	return 0, false
}
