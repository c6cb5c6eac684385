package htmlreport

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// chartSVGs draws charts and returns each SVG by title.
func chartSVGs(t *testing.T, charts []*Chart) (titles []string, svgs map[string][]byte) {
	t.Helper()
	svgs = map[string][]byte{}
	for _, c := range charts {
		b, err := c.SVG()
		if err != nil {
			t.Fatalf("chart %s: %v", c.Title, err)
		}
		titles = append(titles, c.Title)
		svgs[c.Title] = b
	}
	return titles, svgs
}

// pointsOf parses a wb-series' data-points ("x,y x,y …").
func pointsOf(t *testing.T, attr string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, p := range strings.Fields(attr) {
		xs, ys, _ := strings.Cut(p, ",")
		x, err1 := strconv.ParseFloat(xs, 64)
		y, err2 := strconv.ParseFloat(ys, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("point %q", p)
		}
		out = append(out, [2]float64{x, y})
	}
	return out
}

// A UDP test through a 16 Mbit/s token bucket that lost 21 %: the
// dashboard gets the report's throughput chart (offer, what arrived, the
// medium's line), then the loss and jitter of the receiver's intervals,
// each step the interval's lost share of what was expected, none past the
// test's end.
func TestDashboardChartsOfALossyUDPTest(t *testing.T) {
	d := comparedRuns(t)[1]
	charts, err := DashboardCharts(d)
	if err != nil {
		t.Fatal(err)
	}
	titles, svgs := chartSVGs(t, charts)
	if strings.Join(titles, "|") != "Throughput over time|Loss over time|Jitter over time" {
		t.Fatalf("charts %q", titles)
	}
	roles := ""
	for _, s := range svgGroups(t, svgs["Throughput over time"], "wb-series") {
		roles += s["data-role"] + " "
	}
	if roles != "offered received medium " {
		t.Errorf("throughput series roles %q, want the report's", roles)
	}
	var doc struct {
		Receiver struct {
			Intervals []struct {
				Start   float64 `json:"start_s"`
				End     float64 `json:"end_s"`
				Packets float64 `json:"packets"`
				Lost    float64 `json:"lost"`
			} `json:"intervals"`
		} `json:"receiver"`
	}
	if err := json.Unmarshal(d.raw, &doc); err != nil {
		t.Fatal(err)
	}
	loss := svgGroups(t, svgs["Loss over time"], "wb-series")
	if len(loss) != 1 || loss[0]["data-series"] != "received" || loss[0]["data-role"] != "received" {
		t.Fatalf("loss series %v", loss)
	}
	pts := pointsOf(t, loss[0]["data-points"])
	ivs := doc.Receiver.Intervals
	if len(pts) != 2*(len(ivs)-1) { // the last interval starts at the test's end (3 s)
		t.Fatalf("%d loss points for %d intervals, one past the end: %v", len(pts), len(ivs), pts)
	}
	maxLoss := 0.0
	for i := 0; i < len(pts); i += 2 {
		in := ivs[i/2]
		want := 100 * in.Lost / (in.Packets + in.Lost)
		if pts[i][0] != in.Start || math.Abs(pts[i][1]-want) > 1e-4 || pts[i+1][1] != pts[i][1] || pts[i+1][0] > 3 {
			t.Errorf("loss step %v %v, want %.4f %% from %g s", pts[i], pts[i+1], want, in.Start)
		}
		maxLoss = max(maxLoss, pts[i][1])
	}
	if maxLoss < 15 {
		t.Errorf("the lossy run's loss chart peaks at %.1f %%", maxLoss)
	}
	if j := svgGroups(t, svgs["Jitter over time"], "wb-series"); len(j) != 1 || len(pointsOf(t, j[0]["data-points"])) != len(pts) {
		t.Errorf("jitter series %v", j)
	}
}

// A sender's intervals measured no loss: an older document that wrote
// zeros for them (client.json, no receiver's intervals) gets no loss or
// jitter chart; a TCP test none either.
func TestDashboardChartsDrawNoLossASenderDidNotMeasure(t *testing.T) {
	for _, name := range []string{"client.json"} {
		charts, err := DashboardCharts(loadDoc(t, name))
		if err != nil {
			t.Fatal(err)
		}
		titles, _ := chartSVGs(t, charts)
		if strings.Join(titles, "|") != "Throughput over time" {
			t.Errorf("%s: charts %q, want only the throughput", name, titles)
		}
	}
}

// A sweep: the report's goodput chart, then the datagram rate by size
// drawn the same way: a point per size at its rate_pps, the line's packet
// rate dashed, the cliff marked.
func TestDashboardChartsOfASweep(t *testing.T) {
	d := loadDoc(t, "sweep-cliff.json")
	charts, err := DashboardCharts(d)
	if err != nil {
		t.Fatal(err)
	}
	titles, svgs := chartSVGs(t, charts)
	if strings.Join(titles, "|") != "Sweep|Sweep, datagrams/s" {
		t.Fatalf("charts %q", titles)
	}
	var doc struct {
		Sizes []struct {
			Size    float64 `json:"size"`
			RatePPS float64 `json:"rate_pps"`
			LinePPS float64 `json:"line_pps"`
		} `json:"sizes"`
	}
	if err := json.Unmarshal(d.raw, &doc); err != nil {
		t.Fatal(err)
	}
	pps := svgs["Sweep, datagrams/s"]
	points := svgGroups(t, pps, "wb-point")
	if len(points) != len(doc.Sizes) {
		t.Fatalf("%d points for %d sizes", len(points), len(doc.Sizes))
	}
	for i, p := range points {
		x, _ := strconv.ParseFloat(p["data-x"], 64)
		y, _ := strconv.ParseFloat(p["data-y"], 64)
		if z := doc.Sizes[i]; x != z.Size || math.Abs(y-z.RatePPS) > 1e-3*z.RatePPS {
			t.Errorf("point %d at %g, %g; want %g B, %g datagrams/s", i, x, y, z.Size, z.RatePPS)
		}
	}
	var limit map[string]string
	for _, s := range svgGroups(t, pps, "wb-series") {
		if s["data-role"] == "limit" {
			limit = s
		}
	}
	if limit == nil || len(pointsOf(t, limit["data-points"])) != len(doc.Sizes) || limit["data-series"] != "theoretical limit (eth100)" {
		t.Errorf("the line's series %v", limit)
	}
	if cliffs := svgGroups(t, pps, "wb-cliff"); len(cliffs) != 1 || cliffs[0]["data-below"] != "1262" {
		t.Errorf("cliffs %v", cliffs)
	}
}

// The comparison charts are the report's: a bar per run, named by the
// labels that tell them apart; one document alone has none.
func TestComparisonChartsAreTheReports(t *testing.T) {
	runs := comparedRuns(t)
	charts, err := ComparisonCharts(runs)
	if err != nil {
		t.Fatal(err)
	}
	_, svgs := chartSVGs(t, charts)
	bars := svgGroups(t, svgs["Goodput by document"], "wb-bar")
	if len(charts) != 1 || len(bars) != 2 || bars[0]["data-label"] != "link=eth" || bars[1]["data-label"] != "link=usb" {
		t.Errorf("%d charts, bars %v", len(charts), bars)
	}
	if charts, err := ComparisonCharts(runs[:1]); err != nil || len(charts) != 0 {
		t.Errorf("one run compared: %d charts, %v", len(charts), err)
	}
}

// The matrix's bars carry their data as the comparison's do: a wb-bar
// group per cell with its label and value (Mbit/s); a ping's a bar per
// percentile and size.
func TestGroupedBarsCarryTheirData(t *testing.T) {
	d := loadDoc(t, "matrix.json")
	charts, err := DashboardCharts(d)
	if err != nil {
		t.Fatal(err)
	}
	_, svgs := chartSVGs(t, charts)
	var m struct {
		Cells []struct {
			Protocol  string   `json:"protocol"`
			Direction string   `json:"direction"`
			BPS       *float64 `json:"bits_per_second"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(d.raw, &m); err != nil {
		t.Fatal(err)
	}
	short := map[string]string{"upload": "up", "download": "down"}
	bars := svgGroups(t, svgs["Goodput per cell"], "wb-bar")
	if len(bars) != len(m.Cells) {
		t.Fatalf("%d bars for %d cells", len(bars), len(m.Cells))
	}
	for i, c := range m.Cells {
		v, _ := strconv.ParseFloat(bars[i]["data-value"], 64)
		if want := strings.ToUpper(c.Protocol) + " " + short[c.Direction]; bars[i]["data-label"] != want || math.Abs(v-*c.BPS/1e6) > 1e-6**c.BPS/1e6 {
			t.Errorf("bar %d: %v, want %s at %g Mbit/s", i, bars[i], want, *c.BPS/1e6)
		}
	}
	charts, err = DashboardCharts(loadDoc(t, "ping.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, svgs = chartSVGs(t, charts)
	bars = svgGroups(t, svgs["RTT"], "wb-bar")
	if len(bars) != 3 || bars[0]["data-series"] != "min" || bars[2]["data-series"] != "p99" || bars[0]["data-label"] != "56 B" {
		t.Errorf("ping bars %v, want min, p50, p99 of 56 B (one size: bars, not lines)", bars)
	}
}

// When no corner is free, the legend goes above the data, in the top
// corner the cliff's label leaves free: the datagram rate chart of the
// sweep, whose rate falls from top left to bottom right and whose cliff
// label is near the right edge, has it top left.
func TestLegendAboveTheDataKeepsOffTheCliffLabel(t *testing.T) {
	p, err := sweepRatePlots(loadDoc(t, "sweep-cliff.json"))
	if err != nil || len(p) != 1 {
		t.Fatal(err)
	}
	if l := p[0].p.Legend; !l.Top || !l.Left {
		t.Errorf("legend top %v, left %v; want top left, away from the cliff at 1262 B", l.Top, l.Left)
	}
}

// A matrix cell that failed part-way shows its partial figure in the
// table, marked failed, and no bar beside the cells' results.
func TestMatrixFailedCellHasNoBar(t *testing.T) {
	doc := `{"schema":"wirebench/1","kind":"matrix","host":"127.0.0.1","port":5001,"dialect":"iperf2-legacy","duration_s":5,"cells":[
{"protocol":"tcp","direction":"upload","method":"client sends","bits_per_second":9.4e7,"basis":"receiver","status":"ok"},
{"protocol":"udp","direction":"upload","method":"client sends","bits_per_second":4.9e7,"basis":"sender","status":"failed","reason":"the test ended early"}]}`
	d, err := Decode("matrix-failed.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	charts, err := DashboardCharts(d)
	if err != nil {
		t.Fatal(err)
	}
	_, svgs := chartSVGs(t, charts)
	bars := svgGroups(t, svgs["Goodput per cell"], "wb-bar")
	if len(bars) != 1 || bars[0]["data-label"] != "TCP up" {
		t.Errorf("bars %v, want the TCP upload's alone", bars)
	}
}
