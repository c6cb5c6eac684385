package htmlreport

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/wirebench/wirebench/internal/result"
)

// loadDoc decodes testdata/name.
func loadDoc(t *testing.T, name string) Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(name, b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func testViewOf(t *testing.T, d Document) *result.Result {
	t.Helper()
	var v result.Result
	if err := d.view(&v); err != nil {
		t.Fatal(err)
	}
	return &v
}

// comparedRuns are two saved runs as the results store hands them over.
// Both were written by `wirebench client HOST --dialect iperf3 -u -b 20M
// -t 3 -i 0.5 --medium eth100 --json` against a wirebench server, whose
// per-interval report is in receiver.intervals: client-iperf3-20M.json
// over loopback (no loss), client-iperf3-20M-tbf16M.json between two
// network namespaces whose veth sends through a 16 Mbit/s token bucket
// (tbf), which dropped 21 % of the datagrams.
func comparedRuns(t *testing.T) []Document {
	t.Helper()
	eth, usb := loadDoc(t, "client-iperf3-20M.json"), loadDoc(t, "client-iperf3-20M-tbf16M.json")
	eth.Run, eth.Name = "run 7", "run 7 (dialect=iperf3,link=eth,role=client)"
	eth.Labels = map[string]string{"dialect": "iperf3", "role": "client", "link": "eth"}
	usb.Run, usb.Name = "run 9", "run 9 (dialect=iperf3,link=usb,role=client)"
	usb.Labels = map[string]string{"dialect": "iperf3", "role": "client", "link": "usb"}
	return []Document{eth, usb}
}

func TestRunLabelsAreTheLabelsThatTellRunsApart(t *testing.T) {
	docs := comparedRuns(t)
	if got := runLabels(docs); fmt.Sprint(got) != "[link=eth link=usb]" {
		t.Errorf("labels %q, want [link=eth link=usb]", got)
	}
	// A file has no labels: its name; a run without telling labels: its id.
	file := Document{Name: "before.json"}
	same := docs[1]
	same.Labels = docs[0].Labels
	if got := runLabels([]Document{file, docs[0], same}); fmt.Sprint(got) != "[before.json run 7 run 9]" {
		t.Errorf("labels %q", got)
	}
	usb := docs[1]
	usb.Run = "run 11"
	if got := runLabels([]Document{docs[0], same, usb}); fmt.Sprint(got) != "[link=eth (run 7) link=eth (run 9) link=usb]" {
		t.Errorf("labels %q", got)
	}
	if got := runLabels([]Document{{Name: "a.json"}, {Run: "run 3", Name: "run 3"}}); fmt.Sprint(got) != "[a.json run 3]" {
		t.Errorf("labels %q", got)
	}
}

func TestCompareBarsCarryTheRatioToTheFirst(t *testing.T) {
	b := newCompareBars([]string{"link=eth", "link=usb"}, []float64{82.3, 41.15})
	if b.ratios[0] != 1 || math.Abs(b.ratios[1]-0.5) > 1e-12 {
		t.Errorf("ratios %v, want [1 0.5]", b.ratios)
	}
	if b.texts[0] != "82.30 Mbit/s (baseline)" || b.texts[1] != "41.15 Mbit/s (0.50× baseline)" {
		t.Errorf("texts %q", b.texts)
	}
	p, err := b.plot("Goodput by document")
	if err != nil || p == nil {
		t.Fatalf("no chart: %v", err)
	}
	// Narrower bars, shorter texts: the ratio stays on each.
	b = newCompareBars([]string{"a", "b", "c", "d", "e"}, []float64{10, 5, 20, 10, 2.5})
	if got := fmt.Sprint(b.texts); got != "[baseline 0.50× 2.00× 1.00× 0.25×]" {
		t.Errorf("texts %s", got)
	}
	if got := axisLabel("client-iperf3-20M-tbf16M.json", 4); got != "clie…bf16M.json" {
		t.Errorf("axis label %q", got)
	}
}

// meanOf is the time-weighted mean of a step series (pairs of points
// start, end at one level).
func meanOf(xys plotter.XYs) (mean, span float64) {
	var sum float64
	for i := 0; i+1 < len(xys); i += 2 {
		d := xys[i+1].X - xys[i].X
		sum += xys[i].Y * d
		span += d
	}
	return sum / span, span
}

func rolesOf(ss []series) []string {
	var r []string
	for _, s := range ss {
		r = append(r, s.role)
	}
	return r
}

func TestThroughputDrawsWhatTheReceiverGot(t *testing.T) {
	for _, c := range []struct {
		file    string
		late    string  // the caption's share of bytes after the end
		maxRecv float64 // the received series' mean as a share of the offer, at most
	}{
		{"client-iperf3-20M.json", "0.8 %", 1.01},
		{"client-iperf3-20M-tbf16M.json", "1.7 %", 0.8},
	} {
		v := testViewOf(t, loadDoc(t, c.file))
		ss, note := throughputSeries(v)
		if !strings.HasPrefix(note, c.late+" of the bytes received arrived after the test's end at 3 s") {
			t.Errorf("%s: note %q", c.file, note)
		}
		if got := fmt.Sprint(rolesOf(ss)); got != "[offered received medium]" {
			t.Fatalf("%s: roles %s, want [offered received medium]", c.file, got)
		}
		if ss[0].name != "offered (sender)" {
			t.Errorf("%s: the sender's series is named %q", c.file, ss[0].name)
		}
		offered, _ := meanOf(ss[0].xys)
		received, span := meanOf(ss[1].xys)
		// The receiver's figure counts the bytes after the end too: the
		// drawn series, over its span, plus those, make it up.
		want := v.Receiver.BitsPerSecond / 1e6
		var late float64
		for _, in := range v.Receiver.Intervals {
			if in.End > 3 {
				late += in.BitsPerSecond / 1e6 * (in.End - 3)
			}
		}
		if total := (received*span + late) / v.Receiver.Seconds; math.Abs(total-want) > 0.001*want {
			t.Errorf("%s: drawn %.3f Mbit/s over %.3f s and %.3f Mbit after the end make %.3f Mbit/s, the receiver counted %.3f",
				c.file, received, span, late, total, want)
		}
		if received > c.maxRecv*offered {
			t.Errorf("%s: received %.3f Mbit/s of %.3f offered, want at most %.0f %%", c.file, received, offered, 100*c.maxRecv)
		}
		for _, s := range ss {
			for _, p := range s.xys {
				if p.X > v.Test.Duration {
					t.Errorf("%s: series %q has a point at %.3f s, past the test's end at %g s", c.file, s.name, p.X, v.Test.Duration)
				}
			}
		}
		if m := ss[2].xys[0].Y; math.Abs(m-v.Link.TheoreticalBPS/1e6) > 1e-9 {
			t.Errorf("%s: medium line at %.3f", c.file, m)
		}
	}
}

func TestThroughputSaysWhenTheReceiversIntervalsAreUnknown(t *testing.T) {
	// client.json: an iperf2-dialect client; the peer's report has a
	// whole-test receiver figure and no intervals.
	v := testViewOf(t, loadDoc(t, "client.json"))
	ss, note := throughputSeries(v)
	if note != noReceiverIntervals {
		t.Errorf("note %q", note)
	}
	if got := fmt.Sprint(rolesOf(ss)); got != "[offered received-average]" {
		t.Errorf("roles %s, want [offered received-average]", got)
	}
	p, caption, err := throughputPlot(v)
	if err != nil || p == nil || caption != noReceiverIntervals || !strings.Contains(p.Title.Text, "receiver's intervals unknown") {
		t.Errorf("title %q, caption %q, err %v", p.Title.Text, caption, err)
	}
}

func TestThroughputOfAReceivingServerIsItsOwnIntervals(t *testing.T) {
	doc := `{"schema":"wirebench/1","kind":"test","role":"server","test":{"protocol":"udp","direction":"receive","duration_s":2},
	"intervals":[{"start_s":0,"end_s":1,"bits_per_second":8e6},{"start_s":1,"end_s":2,"bits_per_second":6e6},{"start_s":2,"end_s":2.5,"bits_per_second":0}],
	"receiver":{"bits_per_second":7e6}}`
	d, err := Decode("server.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	ss, note := throughputSeries(testViewOf(t, d))
	if note != "" || fmt.Sprint(rolesOf(ss)) != "[received]" {
		t.Fatalf("roles %v, note %q", rolesOf(ss), note)
	}
	if got := fmt.Sprint(ss[0].xys); got != "[{0 8} {1 8} {1 6} {2 6}]" {
		t.Errorf("points %s: the interval after the end must be left out", got)
	}
}

func TestSweepChartFollowsTheDataAndMarksCliffs(t *testing.T) {
	// sweep-cliff.json: internal/sweep's search and bisection against the
	// simulated modem of internal/web's tests (a buffer of 2524 bytes).
	d := loadDoc(t, "sweep-cliff.json")
	var sw result.Sweep
	if err := d.view(&sw); err != nil {
		t.Fatal(err)
	}
	sc := newSweepChart(&sw)
	if len(sc.measured) != len(sw.Sizes) || len(sc.limit) != len(sw.Sizes) || sc.note != "" {
		t.Errorf("%d measured, %d limit points for %d sizes, note %q", len(sc.measured), len(sc.limit), len(sw.Sizes), sc.note)
	}
	if len(sc.cliffs) != 1 || sc.cliffs[0].label() != "cliff 1262→1263 B" {
		t.Errorf("cliffs %v", sc.cliffs)
	}
	p, err := sc.plot()
	if err != nil || p == nil {
		t.Fatal(err)
	}
	top := math.Max(maxY(sc.measured), maxY(sc.limit))
	if p.Y.Max < top*1.05 || p.Y.Max > top*1.5 {
		t.Errorf("y axis to %.1f for data and line up to %.1f: want about 10 %% above", p.Y.Max, top)
	}
	// The same sweep read against gigabit Ethernet: the line is ten times
	// the data, off the scale, and the chart says so.
	for i := range sw.Sizes {
		if sw.Sizes[i].PercentOfLine != nil {
			v := *sw.Sizes[i].PercentOfLine / 10.4
			sw.Sizes[i].PercentOfLine = &v
		}
	}
	sc = newSweepChart(&sw)
	if sc.limit != nil || !strings.Contains(sc.note, "off this scale") {
		t.Errorf("limit %v, note %q", sc.limit, sc.note)
	}
	if p, _ = sc.plot(); p.Y.Max > 1.5*maxY(sc.measured) {
		t.Errorf("y axis to %.1f for data up to %.1f", p.Y.Max, maxY(sc.measured))
	}
}

func TestLegendGoesToAFreeCorner(t *testing.T) {
	flatHigh := []series{{name: "a", xys: plotter.XYs{{X: 0, Y: 10}, {X: 10, Y: 10}}},
		{name: "b", xys: plotter.XYs{{X: 0, Y: 0.5}, {X: 10, Y: 0.5}}}}
	p, err := linesChart("t", "x", "y", flatHigh)
	if err != nil || p == nil {
		t.Fatal(err)
	}
	if !p.Legend.Top || p.Y.Max < 10/(1-0.2) {
		t.Errorf("legend top %v, y axis to %.2f: the axis must grow above the data for the legend", p.Legend.Top, p.Y.Max)
	}
}

// svgGroups lists the hook groups of class in svg: each one's data
// attributes and text.
func svgGroups(t *testing.T, svg []byte, class string) []map[string]string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var out []map[string]string
	depth, in := 0, -1
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			depth++
			if e.Name.Local == "g" && in < 0 {
				m := map[string]string{}
				for _, a := range e.Attr {
					m[a.Name.Local] = a.Value
				}
				if m["class"] == class {
					in = depth
					out = append(out, m)
				}
			}
		case xml.EndElement:
			if depth == in {
				in = -1
			}
			depth--
		case xml.CharData:
			if in >= 0 {
				out[len(out)-1]["text"] += strings.TrimSpace(string(e))
			}
		}
	}
	return out
}

func TestSVGHooksCarryTheData(t *testing.T) {
	docs := append(comparedRuns(t), loadDoc(t, "sweep-cliff.json"))
	r, page := buildHTML(t, docs)
	if strings.Contains(page, "wbhook-") {
		t.Error("a hook sentinel is left in the page")
	}
	svgs := map[string][]byte{}
	for _, c := range r.Charts() {
		b, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		svgs[c.Title] = b
	}
	bars := svgGroups(t, svgs["Goodput by document"], "wb-bar")
	if len(bars) != 2 || bars[0]["data-label"] != "link=eth" || bars[1]["data-label"] != "link=usb" ||
		bars[0]["data-ratio"] != "1.000" || !strings.Contains(bars[1]["text"], "× baseline") {
		t.Errorf("bars %v", bars)
	}
	series := svgGroups(t, svgs["Throughput over time"], "wb-series")
	roles := ""
	for _, s := range series {
		roles += s["data-role"] + " "
	}
	if roles != "offered received medium " {
		t.Errorf("series roles %q", roles)
	}
	points := svgGroups(t, svgs["Sweep"], "wb-point")
	cliffs := svgGroups(t, svgs["Sweep"], "wb-cliff")
	if len(points) != 11 || len(cliffs) != 1 || cliffs[0]["data-below"] != "1262" || cliffs[0]["text"] != "cliff 1262→1263 B" {
		t.Errorf("%d points, cliffs %v", len(points), cliffs)
	}
}

func TestHookSentinelsCannotBeForged(t *testing.T) {
	// A document's text that looks like a sentinel stays text.
	docs := comparedRuns(t)
	docs[0].Labels["link"] = "wbhook-0123456789abcdef-e"
	r, _ := buildHTML(t, docs)
	b, err := r.Charts()[0].SVG()
	if err != nil {
		t.Fatal(err)
	}
	if bars := svgGroups(t, b, "wb-bar"); len(bars) != 2 || !regexp.MustCompile(`wbhook-0123456789abcdef-e`).Match(b) {
		t.Errorf("bars %v", bars)
	}
	// A group begun and not ended is an error, not a broken SVG.
	c := newHookCanvas(chartW, chartH)
	c.begin(hook{class: "wb-bar"})
	var out bytes.Buffer
	if _, err := c.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	if _, err := c.injectHooks(out.Bytes()); err == nil {
		t.Error("an unended group went unnoticed")
	}
}
