package htmlreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"gonum.org/v1/plot/plotter"

	"github.com/wirebench/wirebench/internal/result"
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
	wantRatio := usb.Receiver.BitsPerSecond / eth.Receiver.BitsPerSecond
	for i, want := range []struct {
		label, ratio, text string
		mbps               float64
	}{
		{"link=eth", "1.000", "(baseline)", eth.Receiver.BitsPerSecond / 1e6},
		{"link=usb", fmt.Sprintf("%.3f", wantRatio), fmt.Sprintf("(%.2f× baseline)", wantRatio), usb.Receiver.BitsPerSecond / 1e6},
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
				late += in.BitsPerSecond / 1e6 * (in.End - math.Max(in.Start, v.Test.Duration))
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

	var sw result.Sweep
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

// rfcPage is what the browser reads of an RFC 2544 run's section.
type rfcPage struct {
	Charts []struct {
		Caption string
		Series  []struct{ Name, Role, Points string }
		Points  int // wb-point groups
		W, H    float64
	}
	Tables []struct {
		Name string
		Rows []string // each row's first cell
	}
}

// readRFC reads the charts (their series and points through the hooks)
// and the tables of the page's rfc2544 section.
const readRFC = `(() => {
  const sec = document.querySelector('section.doc[data-kind="rfc2544"]');
  return {
    Charts: Array.from(sec.querySelectorAll("figure.chart")).map(f => ({
      Caption: f.querySelector("figcaption").textContent,
      Series: Array.from(f.querySelectorAll("g.wb-series")).map(g => ({Name: g.dataset.series, Role: g.dataset.role, Points: g.dataset.points})),
      Points: f.querySelectorAll("g.wb-point").length,
      W: f.querySelector("svg").getBoundingClientRect().width, H: f.querySelector("svg").getBoundingClientRect().height})),
    Tables: Array.from(sec.querySelectorAll("table[data-table]")).map(t => ({Name: t.dataset.table,
      Rows: Array.from(t.querySelectorAll("tr")).slice(1).map(r => r.cells[0].textContent)})),
  };
})()`

// TestRFC2544ChartsCarryTheirDataInChromium reads, in the browser, the
// charts of a real RFC 2544 run: `wirebench rfc2544 127.0.0.1 --mode
// reflect --medium eth100 --sizes 64,512,1518 --trial 500ms --confirm 2s
// --json` against `wirebench reflect --model rate=10mbit,queue=50ms` on a
// busy loopback host (testdata/rfc2544.json; 512 B found no NDR, so it has
// no latency points). The throughput chart has the NDR and PDR series
// with a point per size (the line rate, 11× the rates, is left out and
// the caption says so); the frame loss chart a series per size named
// "SIZE B" with a point per step; a latency chart per size with latency
// points, whose p50, p99, max and min series have a point per load; and a
// table per test with a row per size.
func TestRFC2544ChartsCarryTheirDataInChromium(t *testing.T) {
	bin := chromiumPath(t)
	if testing.Short() {
		t.Skip("starting a browser takes seconds; skipped with -short")
	}
	d := loadDoc(t, "rfc2544.json")
	var v result.RFC2544
	if err := d.view(&v); err != nil {
		t.Fatal(err)
	}
	_, page := buildHTML(t, []Document{d})
	bctx, _ := openInChromium(t, bin, page, func(any) {})
	got, err := chromedp.Run(bctx, chromedp.Evaluate[rfcPage](readRFC))
	if err != nil {
		t.Fatalf("reading the rfc2544 section: %v", err)
	}
	var latencySizes []result.RFC2544Size
	for _, z := range v.Sizes {
		if len(z.Latency) > 0 {
			latencySizes = append(latencySizes, z)
		}
	}
	if len(got.Charts) != 3+len(latencySizes) || len(latencySizes) == 0 {
		t.Fatalf("%d charts, want throughput, frame rate, loss and %d latency charts: %+v", len(got.Charts), len(latencySizes), got.Charts)
	}
	for _, c := range got.Charts {
		if c.W < 300 || c.H < 100 {
			t.Errorf("chart %q drawn %.0f × %.0f px", c.Caption, c.W, c.H)
		}
	}
	npts := func(s string) int { return len(strings.Fields(s)) }

	// A size where no rate passed (512 B here) has no NDR point: its 0
	// is "below the lowest rate tried", not a rate.
	var withNDR []int
	withPDR := 0
	for i, z := range v.Sizes {
		if z.NDRPPS > 0 {
			withNDR = append(withNDR, i)
		}
		if z.PDRPPS > 0 {
			withPDR++
		}
	}
	if len(withNDR) == len(v.Sizes) {
		t.Fatalf("the test file has no size without an NDR; it is there to show how one is drawn")
	}
	tp := got.Charts[0]
	if !strings.HasPrefix(tp.Caption, "Throughput (NDR, PDR)") || len(tp.Series) != 2 || tp.Series[0].Role != "ndr" || tp.Series[1].Role != "pdr" ||
		npts(tp.Series[0].Points) != len(withNDR) || npts(tp.Series[1].Points) != withPDR || tp.Points != len(withNDR)+withPDR {
		t.Errorf("throughput chart %+v, want NDR with %d points and PDR with %d", tp, len(withNDR), withPDR)
	}
	if !strings.Contains(tp.Caption, "line rate (eth100)") || !strings.Contains(tp.Caption, "off this scale") {
		t.Errorf("the throughput chart's caption %q does not say where the line rate is", tp.Caption)
	}
	ndr, err := parsePoints(tp.Series[0].Points)
	if err != nil || len(ndr) != len(withNDR) {
		t.Fatalf("NDR points %q: %v", tp.Series[0].Points, err)
	}
	for i, k := range withNDR {
		z := v.Sizes[k]
		if ndr[i].X != float64(z.Size) || math.Abs(ndr[i].Y-z.NDRBPS/1e6) > 1e-6*math.Max(1, ndr[i].Y) {
			t.Errorf("NDR point %d: %v, want %d B at %.6f Mbit/s", i, ndr[i], z.Size, z.NDRBPS/1e6)
		}
	}

	// The frame rate chart: the NDR as a share of the medium's frame rate,
	// whose line (at 100 %) is on it even where the Mbit/s chart's is off scale.
	if fr := got.Charts[1]; !strings.HasPrefix(fr.Caption, "Frame rate (NDR, PDR)") || len(fr.Series) != 3 ||
		fr.Series[0].Role != "ndr" || npts(fr.Series[0].Points) != len(withNDR) || fr.Series[2].Role != "line" {
		t.Errorf("frame rate chart %+v, want NDR with %d points and the medium's line", fr, len(withNDR))
	}
	loss := got.Charts[2]
	steps := 0
	for i, z := range v.Sizes {
		steps += len(z.LossCurve)
		if i >= len(loss.Series) || loss.Series[i].Name != fmt.Sprintf("%d B", z.Size) || npts(loss.Series[i].Points) != len(z.LossCurve) {
			t.Errorf("loss series %d: %+v, want %d B with %d points", i, loss.Series[i:min(i+1, len(loss.Series))], z.Size, len(z.LossCurve))
		}
	}
	if !strings.HasPrefix(loss.Caption, "Frame loss rate") || len(loss.Series) != len(v.Sizes) || loss.Points != steps {
		t.Errorf("loss chart %q: %d series, %d points, want %d and %d", loss.Caption, len(loss.Series), loss.Points, len(v.Sizes), steps)
	}

	for i, z := range latencySizes {
		c := got.Charts[3+i]
		var roles []string
		for _, s := range c.Series {
			roles = append(roles, s.Role)
			if npts(s.Points) != len(z.Latency) {
				t.Errorf("%s: series %s has %d points, want %d", c.Caption, s.Name, npts(s.Points), len(z.Latency))
			}
		}
		if !strings.HasPrefix(c.Caption, fmt.Sprintf("Latency at load, %d B", z.Size)) || fmt.Sprint(roles) != "[p50 p99 max min]" || c.Points != 2*len(z.Latency) {
			t.Errorf("latency chart %q: roles %v, %d points, want p50 p99 max min and %d points", c.Caption, roles, c.Points, 2*len(z.Latency))
		}
	}

	var tables []string
	for _, tb := range got.Tables {
		tables = append(tables, tb.Name)
		var want []string
		for _, z := range v.Sizes {
			want = append(want, strconv.Itoa(z.Size))
		}
		if fmt.Sprint(tb.Rows) != fmt.Sprint(want) {
			t.Errorf("table %s: rows %q, want a row per size %q", tb.Name, tb.Rows, want)
		}
	}
	if fmt.Sprint(tables) != "[throughput latency loss backtoback]" {
		t.Errorf("tables %v, want one per test", tables)
	}
}
