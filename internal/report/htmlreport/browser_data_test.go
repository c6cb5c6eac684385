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
	Ticks       []string
	Runs        []runChart // the throughput charts of run 7 and run 9
	SweepPoints int
	Cliffs      []struct {
		Below, Above, Text string
		H                  float64
	}
}

// runChart is what the browser reads of a run's throughput chart.
type runChart struct {
	Received     string // data-points of the received series
	ReceivedW    float64
	Offered      string // the offered series' name
	OfferedPts   string
	ReceiverMbps string // the run's summary table, row "receiver"
}

// readCharts reads, in the page as the browser laid it out: the
// comparison chart's bars (label, ratio, text, drawn size) and tick
// texts; the series of the throughput charts of run 7 and run 9 and their
// summary tables' receiver goodput; the sweep chart's points and cliffs.
const readCharts = `(() => {
  const figs = Array.from(document.querySelectorAll("figure.chart"));
  const cmp = figs.find(f => f.querySelector("figcaption").textContent.startsWith("Goodput by document"));
  const sweep = figs.find(f => f.querySelector("figcaption").textContent.startsWith("Sweep"));
  const box = e => e.getBoundingClientRect();
  const runs = ["run 7", "run 9"].map(name => {
    const sec = Array.from(document.querySelectorAll("section.doc")).find(s => s.querySelector("h2").textContent.startsWith(name));
    const fig = sec.querySelector("figure.chart");
    const recv = fig.querySelector('g.wb-series[data-role="received"]');
    const off = fig.querySelector('g.wb-series[data-role="offered"]');
    const row = Array.from(sec.querySelectorAll("table.summary tr")).find(r => r.cells[0].textContent === "receiver");
    return {Received: recv ? recv.dataset.points : "", ReceivedW: recv ? box(recv).width : 0,
      Offered: off ? off.dataset.series : "", OfferedPts: off ? off.dataset.points : "",
      ReceiverMbps: row ? row.cells[1].textContent : ""};
  });
  return {
    Bars: Array.from(cmp.querySelectorAll("g.wb-bar")).map(g => ({Label: g.dataset.label, Ratio: g.dataset.ratio,
      Mbps: g.dataset.mbps, Text: g.textContent.trim(), W: box(g.querySelector("path")).width, H: box(g.querySelector("path")).height})),
    Ticks: Array.from(cmp.querySelectorAll("text")).map(e => e.textContent.trim()),
    Runs: runs,
    SweepPoints: sweep.querySelectorAll('g.wb-point[data-series^="measured"]').length,
    Cliffs: Array.from(sweep.querySelectorAll("g.wb-cliff")).map(g => ({Below: g.dataset.below, Above: g.dataset.above,
      Text: g.textContent.trim(), H: box(g).height})),
  };
})()`

// TestReportChartsCarryTheirDataInChromium is issue 22's "charts that
// carry the finding", read in the browser: a report of two saved runs
// (link=eth, link=usb) and a sweep with a cliff. The comparison chart has
// two drawn bars labelled link=eth and link=usb, the second with its
// ratio to the first written on it; each run's chart draws the
// receiver's intervals, whose mean is the receiver goodput of its table
// within 1 % (the lossy run's below its offer), with the sender's offer as
// a second, named series and no point past the test's end; the sweep chart has a point per size and its cliff marked
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

	// Run 7 (no loss): the receiver's series averages its table's figure.
	// Run 9 (21 % lost): the receiver's series lies clearly below the
	// offer, as its goodput does, and its drawn intervals with the bytes
	// after the end make up the table's figure.
	for i, run := range got.Runs {
		v := testViewOf(t, docs[i])
		pts, err := parsePoints(run.Received)
		offered, oerr := parsePoints(run.OfferedPts)
		if err != nil || oerr != nil || len(pts) == 0 || run.ReceivedW < 100 {
			t.Fatalf("run %d: no drawn receiver series (%v, %v): %+v", i, err, oerr, run)
		}
		table, err := strconv.ParseFloat(run.ReceiverMbps, 64)
		if err != nil {
			t.Fatalf("run %d: the table's receiver goodput %q: %v", i, run.ReceiverMbps, err)
		}
		mean, span := meanOf(pts)
		offer, _ := meanOf(offered)
		late := 0.0
		for _, in := range v.Receiver.Intervals {
			if in.End > v.Test.Duration {
				late += in.BPS / 1e6 * (in.End - math.Max(in.Start, v.Test.Duration))
			}
		}
		if i == 0 && math.Abs(mean-table) > 0.01*table {
			t.Errorf("run %d: the receiver series averages %.3f Mbit/s, the table says %.3f", i, mean, table)
		}
		if total := (mean*span + late) / v.Receiver.Seconds; math.Abs(total-table) > 0.001*table+0.0005 {
			t.Errorf("run %d: drawn and late bytes make %.3f Mbit/s, the table says %.3f", i, total, table)
		}
		if i == 1 && mean > 0.85*offer {
			t.Errorf("run 9: received %.3f Mbit/s of %.3f offered: the lossy run looks like its offer", mean, offer)
		}
		for _, p := range append(pts, offered...) {
			if p.X > v.Test.Duration {
				t.Errorf("run %d: a point at %.3f s, past the test's end at %g s", i, p.X, v.Test.Duration)
			}
		}
		if run.Offered != "offered (sender)" {
			t.Errorf("run %d: the sender's series is %q, want \"offered (sender)\"", i, run.Offered)
		}
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
