package htmlreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"gonum.org/v1/plot/plotter"
)

// chartData is what the browser reads of the charts through their hooks
// (hooks.go, docs/report.md).
type chartData struct {
	Bars []struct {
		Label, Ratio, Mbps, Text string
		W, H                     float64
	}
	Ticks    []string
	Received struct {
		Points string
		W      float64
	}
	Offered      string
	ReceiverMbps string // the run's summary table, row "receiver"
	SweepPoints  int
	Cliffs       []struct {
		Below, Above, Text string
		H                  float64
	}
}

// readCharts reads, in the page as the browser laid it out: the
// comparison chart's bars (label, ratio, text, drawn size) and tick
// texts; the throughput chart of the section named run's series and its
// summary table's receiver goodput; the sweep chart's points and cliffs.
const readCharts = `(() => {
  const figs = Array.from(document.querySelectorAll("figure.chart"));
  const cmp = figs.find(f => f.querySelector("figcaption").textContent.startsWith("Goodput by document"));
  const sec = Array.from(document.querySelectorAll("section.doc")).find(s => s.querySelector("h2").textContent.startsWith("run 7"));
  const run = sec.querySelector("figure.chart");
  const sweep = figs.find(f => f.querySelector("figcaption").textContent.startsWith("Sweep"));
  const box = e => e.getBoundingClientRect();
  const recv = run.querySelector('g.wb-series[data-role="received"]');
  const row = Array.from(sec.querySelectorAll("table.summary tr")).find(r => r.cells[0].textContent === "receiver");
  return {
    Bars: Array.from(cmp.querySelectorAll("g.wb-bar")).map(g => ({Label: g.dataset.label, Ratio: g.dataset.ratio,
      Mbps: g.dataset.mbps, Text: g.textContent.trim(), W: box(g.querySelector("path")).width, H: box(g.querySelector("path")).height})),
    Ticks: Array.from(cmp.querySelectorAll("text")).map(e => e.textContent.trim()),
    Received: {Points: recv ? recv.dataset.points : "", W: recv ? box(recv).width : 0},
    Offered: (run.querySelector('g.wb-series[data-role="offered"]') || {dataset: {}}).dataset.series || "",
    ReceiverMbps: row ? row.cells[1].textContent : "",
    SweepPoints: sweep.querySelectorAll('g.wb-point[data-series^="measured"]').length,
    Cliffs: Array.from(sweep.querySelectorAll("g.wb-cliff")).map(g => ({Below: g.dataset.below, Above: g.dataset.above,
      Text: g.textContent.trim(), H: box(g).height})),
  };
})()`

// TestReportChartsCarryTheirDataInChromium is issue 22's "charts that
// carry the finding", read in the browser: a report of two saved runs
// (link=eth, link=usb) and a sweep with a cliff. The comparison chart has
// two drawn bars labelled link=eth and link=usb, the second with its
// ratio to the first written on it; the run's chart draws the receiver's
// intervals, whose mean is the receiver goodput of its table within 1 %,
// with the sender's offer as a second, named series and no point past the
// test's end; the sweep chart has a point per size and its cliff marked
// "cliff 1262→1263 B".
func TestReportChartsCarryTheirDataInChromium(t *testing.T) {
	bin := chromiumPath(t)
	if testing.Short() {
		t.Skip("starting a browser takes seconds; skipped with -short")
	}
	docs := append(comparedRuns(t), loadDoc(t, "sweep-cliff.json"))
	_, page := buildHTML(t, docs)
	bctx, _ := openInChromium(t, bin, page, func(any) {})
	got, err := chromedp.Run(bctx, chromedp.Evaluate[chartData](readCharts))
	if err != nil {
		t.Fatalf("reading the charts: %v", err)
	}

	eth, usb := testViewOf(t, docs[0]), testViewOf(t, docs[1])
	if len(got.Bars) != 2 {
		t.Fatalf("%d bars in the comparison chart, want 2: %+v", len(got.Bars), got.Bars)
	}
	wantRatio := usb.Receiver.BPS / eth.Receiver.BPS
	for i, want := range []struct {
		label, ratio, text string
		mbps               float64
	}{
		{"link=eth", "1.000", "(baseline)", eth.Receiver.BPS / 1e6},
		{"link=usb", fmt.Sprintf("%.3f", wantRatio), fmt.Sprintf("(%.2f× baseline)", wantRatio), usb.Receiver.BPS / 1e6},
	} {
		b := got.Bars[i]
		if b.Label != want.label || b.Ratio != want.ratio || !strings.Contains(b.Text, want.text) || b.Mbps != fmt.Sprintf("%.3f", want.mbps) {
			t.Errorf("bar %d: %+v, want label %s, ratio %s, text with %q, %.3f Mbit/s", i, b, want.label, want.ratio, want.text, want.mbps)
		}
		if b.W < 5 || b.H < 5 {
			t.Errorf("bar %s is drawn %.1f × %.1f px", b.Label, b.W, b.H)
		}
		if !contains(got.Ticks, want.label) {
			t.Errorf("no axis label %q among %q", want.label, got.Ticks)
		}
	}
	if r := got.Bars[1].H / got.Bars[0].H; math.Abs(r-wantRatio) > 0.02 {
		t.Errorf("the bars' drawn heights are in ratio %.3f, the goodputs %.3f", r, wantRatio)
	}

	pts, err := parsePoints(got.Received.Points)
	if err != nil || len(pts) == 0 || got.Received.W < 100 {
		t.Fatalf("the run's chart has no drawn receiver series (%v): %+v", err, got.Received)
	}
	mean, _ := meanOf(pts)
	table, err := strconv.ParseFloat(got.ReceiverMbps, 64)
	if err != nil || math.Abs(mean-table) > 0.01*table {
		t.Errorf("the receiver series averages %.3f Mbit/s, the table says %q (%v)", mean, got.ReceiverMbps, err)
	}
	for _, p := range pts {
		if p.X > eth.Test.Duration {
			t.Errorf("a receiver point at %.3f s, past the test's end at %g s", p.X, eth.Test.Duration)
		}
	}
	if got.Offered != "offered (sender)" {
		t.Errorf("the sender's series is %q, want \"offered (sender)\"", got.Offered)
	}

	var sw sweepView
	if err := docs[2].view(&sw); err != nil {
		t.Fatal(err)
	}
	if got.SweepPoints != len(sw.Sizes) {
		t.Errorf("the sweep chart has %d points, the sweep %d sizes", got.SweepPoints, len(sw.Sizes))
	}
	if len(got.Cliffs) != 1 || got.Cliffs[0].Below != "1262" || got.Cliffs[0].Above != "1263" ||
		got.Cliffs[0].Text != "cliff 1262→1263 B" || got.Cliffs[0].H < 50 {
		t.Errorf("cliff marks %+v, want one, 1262→1263, drawn across the plot", got.Cliffs)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// parsePoints reads a wb-series' data-points ("x,y x,y …").
func parsePoints(s string) (out plotter.XYs, err error) {
	for _, f := range strings.Fields(s) {
		x, y, ok := strings.Cut(f, ",")
		if !ok {
			return nil, fmt.Errorf("point %q", f)
		}
		var p plotter.XY
		if p.X, err = strconv.ParseFloat(x, 64); err != nil {
			return nil, err
		}
		if p.Y, err = strconv.ParseFloat(y, 64); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
