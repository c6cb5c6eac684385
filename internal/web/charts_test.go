package web

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/result"
)

// svgGroup is one hook group of a chart's SVG: its class and data-
// attributes (without "data-").
type svgGroup struct {
	class string
	data  map[string]string
}

// svgGroups parses svg (failing the test when it is not well-formed XML or
// not an <svg>) and returns its wb-* groups in order.
func svgGroups(t *testing.T, svg string) []svgGroup {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var out []svgGroup
	first := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v", err)
		}
		e, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if first && e.Name.Local != "svg" {
			t.Fatalf("the chart is a <%s>, not an <svg>", e.Name.Local)
		}
		first = false
		g := svgGroup{data: map[string]string{}}
		for _, a := range e.Attr {
			switch {
			case a.Name.Local == "style":
				t.Errorf("a <%s> has a style attribute, which the page's Content-Security-Policy refuses: %q", e.Name.Local, a.Value)
			case a.Name.Local == "class":
				g.class = a.Value
			case strings.HasPrefix(a.Name.Local, "data-"):
				g.data[strings.TrimPrefix(a.Name.Local, "data-")] = a.Value
			}
		}
		if e.Name.Local == "g" && strings.HasPrefix(g.class, "wb-") {
			out = append(out, g)
		}
	}
	if first {
		t.Fatal("the chart is empty")
	}
	return out
}

// chartSummary is what a chart draws, read from its SVG's groups.
type chartSummary struct {
	Title  string
	Roles  []string // of its wb-series, in order
	Series map[string]int
	Bars   int
	Points int
	Cliffs int
}

// getCharts fetches url (an /api/…/charts) and reads each chart's SVG.
// It fails the test for a chart that has an error, or whose SVG is
// missing, malformed or draws no series and no bar.
func getCharts(t *testing.T, url string) []chartSummary {
	t.Helper()
	var charts []Chart
	getJSON(t, url, &charts)
	var out []chartSummary
	for _, c := range charts {
		if c.Error != "" || c.SVG == "" {
			t.Errorf("%s: chart %q not drawn: %q", url, c.Title, c.Error)
			continue
		}
		s := chartSummary{Title: c.Title, Series: map[string]int{}}
		for _, g := range svgGroups(t, c.SVG) {
			switch g.class {
			case "wb-series":
				s.Roles = append(s.Roles, g.data["role"])
				s.Series[g.data["series"]] = len(strings.Fields(g.data["points"]))
			case "wb-bar":
				s.Bars++
			case "wb-point":
				s.Points++
			case "wb-cliff":
				s.Cliffs++
			}
		}
		if len(s.Series)+s.Bars == 0 {
			t.Errorf("%s: chart %q draws no series and no bar", url, c.Title)
		}
		out = append(out, s)
	}
	return out
}

func titles(cs []chartSummary) string {
	var ts []string
	for _, c := range cs {
		ts = append(ts, c.Title)
	}
	return strings.Join(ts, "|")
}

// udpIntervals are n 1 s intervals of a UDP receiver, lost datagrams of
// 1000 each.
func udpIntervals(n int, lost int64) []result.Interval {
	var out []result.Interval
	for i := range n {
		out = append(out, result.Interval{Start: float64(i), End: float64(i + 1), Bytes: 1e6, BitsPerSecond: 8e6,
			Packets: 1000 - lost, Lost: lost, JitterMS: 0.2})
	}
	return out
}

// /api/runs/ID/charts answers a saved run's charts as the report draws
// them: a UDP test's throughput with the medium's line, then its loss and
// jitter; a sweep's goodput and datagram rate, a point per size and its
// cliff; a matrix's cells; each an SVG with no inline style.
func TestAPIRunCharts(t *testing.T) {
	s := New(Config{})
	r := udpResult("192.0.2.9:5001", 4e6, 50)
	r.Test.Duration = 4
	r.Intervals = udpIntervals(4, 50)
	r.Link = &result.Link{Medium: "eth100", TheoreticalBPS: 95.7e6, PercentOfTheoretical: 8.4}
	testID, _ := s.memory.Add(r, nil)
	sw := testSweep(t)
	sweepID := addSweep(t, s, sw)
	f := func(v float64) *float64 { return &v }
	mx := &matrix.Result{Schema: result.Schema, Kind: matrix.Kind, StartedAt: time.Now().UTC(), Host: "192.0.2.7", Port: 5001, Dialect: "iperf2", Duration: 2, Warnings: []string{},
		Cells: []matrix.Cell{{Protocol: result.TCP, Direction: matrix.Upload, BitsPerSecond: f(94.276e6), Status: "ok"},
			{Protocol: result.UDP, Direction: matrix.Download, BitsPerSecond: f(9.9e6), Status: "ok"}}}
	mxID, _ := s.memory.AddDoc(RunSummary{Kind: mx.Kind, StartedAt: mx.StartedAt, Target: "192.0.2.7:5001", Summary: "matrix"}, mx)
	base := httptestServer(t, s)

	tc := getCharts(t, fmt.Sprintf("%s/api/runs/%d/charts", base, testID))
	if titles(tc) != "Throughput over time|Loss over time|Jitter over time" {
		t.Fatalf("test charts %q", titles(tc))
	}
	if got := strings.Join(tc[0].Roles, " "); got != "received medium" {
		t.Errorf("throughput series roles %q, want what arrived and the medium's line", got)
	}
	if tc[0].Series["received (receiver)"] != 8 || tc[1].Series["received"] != 8 || tc[2].Series["received"] != 8 {
		t.Errorf("4 intervals should draw 4 steps (8 points) in each chart: %+v", tc)
	}

	sc := getCharts(t, fmt.Sprintf("%s/api/runs/%d/charts", base, sweepID))
	if titles(sc) != "Sweep|Sweep, datagrams/s" {
		t.Fatalf("sweep charts %q", titles(sc))
	}
	for _, c := range sc {
		if c.Points != len(sw.Sizes) || c.Cliffs != len(sw.Cliffs) || c.Roles[1] != "limit" {
			t.Errorf("sweep chart %q: %d points, %d cliffs, roles %v; want %d sizes, %d cliffs and the line", c.Title, c.Points, c.Cliffs, c.Roles, len(sw.Sizes), len(sw.Cliffs))
		}
	}

	mc := getCharts(t, fmt.Sprintf("%s/api/runs/%d/charts", base, mxID))
	if len(mc) != 1 || mc[0].Bars != 2 {
		t.Errorf("matrix charts %+v, want a bar per cell", mc)
	}

	// One chart alone, as an SVG document: the same as in the list.
	var list []Chart
	getJSON(t, fmt.Sprintf("%s/api/runs/%d/charts", base, testID), &list)
	resp, err := http.Get(fmt.Sprintf("%s/api/runs/%d/charts/2.svg", base, testID))
	if err != nil {
		t.Fatal(err)
	}
	one, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "image/svg+xml" || len(svgGroups(t, string(one))) == 0 {
		t.Errorf("2.svg: %d %s, %d bytes", resp.StatusCode, ct, len(one))
	} else if a, b := svgGroups(t, string(one)), svgGroups(t, list[1].SVG); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("2.svg draws %v, the list's second chart %v", a, b)
	}
	for path, want := range map[string]int{"/api/runs/999/charts": http.StatusNotFound, "/api/runs/x/charts": http.StatusBadRequest,
		fmt.Sprintf("/api/runs/%d/charts/4.svg", testID): http.StatusNotFound, fmt.Sprintf("/api/runs/%d/charts/0.svg", testID): http.StatusBadRequest,
		fmt.Sprintf("/api/runs/%d/charts/1", testID): http.StatusBadRequest} {
		if code, body := get(t, base+path); code != want {
			t.Errorf("GET %s: %d %s, want %d", path, code, body, want)
		}
	}
}

// /api/live/ID/charts draws a test in progress from its intervals so far,
// and is 404 once it ended.
func TestAPILiveCharts(t *testing.T) {
	s := New(Config{})
	base := httptestServer(t, s)
	r := result.New("server")
	r.Test = result.Test{Protocol: result.UDP, Direction: result.DirReceive, Dialect: "iperf2", Peer: "192.0.2.9:40000"}
	s.hub.Start(7, "server", r)
	for i, in := range udpIntervals(3, 10) {
		s.hub.Interval(7, in)
		lc := getCharts(t, base+"/api/live/7/charts")
		if titles(lc) != "Throughput over time|Loss over time|Jitter over time" {
			t.Fatalf("live charts %q", titles(lc))
		}
		if n := lc[0].Series["received (receiver)"]; n != 2*(i+1) {
			t.Errorf("after %d intervals the live throughput has %d points", i+1, n)
		}
	}
	if code, body := get(t, base+"/api/live/7/charts/1.svg"); code != http.StatusOK || len(svgGroups(t, body)) == 0 {
		t.Errorf("live 1.svg: %d, %d bytes", code, len(body))
	}
	s.hub.End(LiveEnd{ID: 7}, 7)
	for path, want := range map[string]int{"/api/live/7/charts": http.StatusNotFound, "/api/live/x/charts": http.StatusBadRequest, "/api/live/7/charts/1.svg": http.StatusNotFound} {
		if code, body := get(t, base+path); code != want {
			t.Errorf("GET %s: %d %s, want %d", path, code, body, want)
		}
	}
}

// /api/compare/charts draws the report's comparison of two tests: a bar
// per run, the baseline first.
func TestAPICompareCharts(t *testing.T) {
	s := New(Config{})
	a, _ := s.memory.Add(udpRun("192.0.2.1:5001", 10e6, 0, 0.20), map[string]string{"fw": "1.3"})
	b, _ := s.memory.Add(udpRun("192.0.2.1:5001", 8e6, 10, 0.20), map[string]string{"fw": "1.4"})
	base := httptestServer(t, s)
	cc := getCharts(t, fmt.Sprintf("%s/api/compare/charts?a=%d&b=%d", base, a, b))
	if len(cc) != 1 || cc[0].Bars != 2 {
		t.Errorf("comparison charts %+v, want one with a bar per run", cc)
	}
	for path, want := range map[string]int{"/api/compare/charts?a=1": http.StatusBadRequest, "/api/compare/charts?a=1&b=99": http.StatusNotFound} {
		if code, body := get(t, base+path); code != want {
			t.Errorf("GET %s: %d %s, want %d", path, code, body, want)
		}
	}
}

func TestPresentationAttrs(t *testing.T) {
	in := `<path d="M0,0" style="fill:none;stroke:#1F77B4;stroke-width:1.5;stroke-dasharray:5,3" /><text style="font-family:Liberation Sans;font-size:10px">a</text>`
	want := `<path d="M0,0" fill="none" stroke="#1F77B4" stroke-width="1.5" stroke-dasharray="5,3" /><text font-family="Liberation Sans" font-size="10px">a</text>`
	if got := string(presentationAttrs([]byte(in))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// pageChart is one chart as the page shows it, read in the browser.
type pageChart struct {
	Title, Caption string
	Series         map[string]int // points per series
	Roles          []string
	Bars, Points   int
	Cliffs         int
	// Stroke is the computed stroke of the first series' line: "none"
	// when the page dropped the chart's styles.
	Stroke string
}

// pageChartsJS reads the charts under a selector (%s) in the page.
const pageChartsJS = `[...document.querySelectorAll(%q)].map(f => ({
  Title: f.dataset.title, Caption: (f.querySelector("figcaption") || {}).textContent || "",
  Series: Object.fromEntries([...f.querySelectorAll("g.wb-series")].map(g => [g.dataset.series, g.dataset.points.split(/\s+/).filter(Boolean).length])),
  Roles: [...f.querySelectorAll("g.wb-series")].map(g => g.dataset.role),
  Bars: f.querySelectorAll("g.wb-bar").length, Points: f.querySelectorAll("g.wb-point").length, Cliffs: f.querySelectorAll("g.wb-cliff").length,
  Stroke: (() => { const p = f.querySelector("g.wb-series path"); return p ? getComputedStyle(p).stroke : ""; })(),
}))`

// pageCharts waits until the box sel has loaded its charts, reads them,
// and fails the test for a chart whose SVG is missing or draws nothing,
// or whose lines lost their colour.
func pageCharts(ctx context.Context, t *testing.T, sel string) []pageChart {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`!!document.querySelector(%q)`, sel+"[data-charts]"),
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the charts of %s never loaded: %v", sel, err)
	}
	cs, err := chromedp.Run(ctx, chromedp.Evaluate[[]pageChart](fmt.Sprintf(pageChartsJS, sel+" figure.chart")))
	if err != nil {
		t.Fatalf("reading the charts of %s: %v", sel, err)
	}
	for _, c := range cs {
		if len(c.Series)+c.Bars == 0 {
			t.Errorf("%s: chart %q is missing or empty", sel, c.Title)
		}
		if len(c.Series) > 0 && (c.Stroke == "" || c.Stroke == "none") {
			t.Errorf("%s: chart %q: its lines have stroke %q (the styles did not apply)", sel, c.Title, c.Stroke)
		}
	}
	return cs
}

func pageTitles(cs []pageChart) string {
	var ts []string
	for _, c := range cs {
		ts = append(ts, c.Title)
	}
	return strings.Join(ts, "|")
}
