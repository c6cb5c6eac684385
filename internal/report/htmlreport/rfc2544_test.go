package htmlreport

import (
	"fmt"
	"html/template"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544/findings"
)

// handRFC2544 is an RFC 2544 document written by hand in the keys the
// rfc2544 command writes: two sizes (listed largest first, as a document
// may), 1518 B with every test, 64 B with throughput and a loss curve only,
// the loss steps out of order.
const handRFC2544 = `{"schema":"wirebench/1","kind":"rfc2544","seconds":42,
 "test":{"mode":"reflect","host":"192.0.2.9","port":5001,"medium":"eth100","tests":["throughput","latency","loss","backtoback"],
  "pdr_percent":0.5,"latency_loads_percent":[10,50,100]},
 "sizes":[
  {"size":1518,"line_pps":8000,"ndr_pps":6000,"pdr_pps":6500,"ndr_bps":72864000,"pdr_bps":78936000,
   "ndr":{"held_s":10},"pdr":{"loss_percent":0.2},
   "latency":[{"load_percent":100,"min_ms":2,"p50_ms":4,"p90_ms":5,"p99_ms":6,"max_ms":9},
              {"load_percent":10,"min_ms":1,"p50_ms":1.5,"p90_ms":1.7,"p99_ms":2,"max_ms":3},
              {"load_percent":50,"min_ms":1,"p50_ms":2,"p90_ms":2.5,"p99_ms":3,"max_ms":4,"host_limited":true}],
   "loss_curve":[{"offered_percent":100,"loss_percent":90},{"offered_percent":90,"loss_percent":88.9},{"offered_percent":80,"loss_percent":87.5}],
   "back_to_back_frames":12.5,"back_to_back_us":1520,"back_to_back":{"searches":[{},{}],"min_frames":12,"max_frames":13,"at_line_rate":true},
   "done":["throughput","latency","loss","backtoback"],"warnings":["a warning of one size","a warning the run lists"]},
  {"size":64,"line_pps":148809,"ndr_pps":5000,"pdr_pps":5100,"ndr_bps":2560000,"pdr_bps":2611200,
   "ndr":{"held_s":10,"limited_by_host":true},"pdr":{"loss_percent":0.4},
   "latency":[],"latency_note":"cut short",
   "loss_curve":[{"offered_percent":90,"loss_percent":96},{"offered_percent":100,"loss_percent":97,"host_limited":true}],
   "done":["throughput","loss"]}
 ],"interrupted":true,"warnings":["a warning of the run","1518 B: a warning the run lists"]}`

func handRFCView(t *testing.T) (Document, *result.RFC2544) {
	t.Helper()
	d, err := Decode("rfc.json", []byte(handRFC2544))
	if err != nil {
		t.Fatal(err)
	}
	var v result.RFC2544
	if err := d.view(&v); err != nil {
		t.Fatal(err)
	}
	return d, &v
}

func TestRFC2544ThroughputSeries(t *testing.T) {
	_, v := handRFCView(t)
	ss, note := rfcThroughputSeries(v)
	if note != "" {
		t.Errorf("the line rate is within 3× of the rates, yet off scale: %s", note)
	}
	if got := fmt.Sprint(rolesOf(ss)); got != "[ndr pdr line]" {
		t.Fatalf("roles %s", got)
	}
	if ss[1].name != "PDR (loss ≤ 0.5 %)" || ss[2].name != "line rate (eth100)" || !ss[2].dash {
		t.Errorf("names %q, %q (dashed %v)", ss[1].name, ss[2].name, ss[2].dash)
	}
	// Mbit/s of payload; the line rate is line_pps × 8 × size.
	if got := fmt.Sprint(ss[0].xys); got != "[{1518 72.864} {64 2.56}]" {
		t.Errorf("NDR points %s", got)
	}
	if got := fmt.Sprint(ss[2].xys); got != "[{1518 97.152} {64 76.190208}]" {
		t.Errorf("line points %s", got)
	}
}

func TestRFC2544LossSeriesOnePerSizeAscending(t *testing.T) {
	_, v := handRFCView(t)
	ss := rfcLossSeries(v)
	if len(ss) != 2 || ss[0].name != "1518 B" || ss[1].name != "64 B" {
		t.Fatalf("series %+v", ss)
	}
	if got := fmt.Sprint(ss[0].xys); got != "[{80 87.5} {90 88.9} {100 90}]" {
		t.Errorf("1518 B points %s", got)
	}
	if got := fmt.Sprint(ss[1].xys); got != "[{90 96} {100 97}]" {
		t.Errorf("64 B points %s", got)
	}
}

func TestRFC2544LatencySeriesByLoad(t *testing.T) {
	_, v := handRFCView(t)
	ss := rfcLatencySeries(v.Sizes[0])
	if got := fmt.Sprint(rolesOf(ss)); got != "[p50 p99 max min]" {
		t.Fatalf("roles %s", got)
	}
	want := map[string]string{"p50": "[{10 1.5} {50 2} {100 4}]", "p99": "[{10 2} {50 3} {100 6}]",
		"max": "[{10 3} {50 4} {100 9}]", "min": "[{10 1} {50 1} {100 2}]"}
	for _, s := range ss {
		if got := fmt.Sprint(s.xys); got != want[s.role] {
			t.Errorf("%s: %s, want %s", s.role, got, want[s.role])
		}
		if s.dash != (s.role == "min" || s.role == "max") {
			t.Errorf("%s dashed %v", s.role, s.dash)
		}
	}
	if ss := rfcLatencySeries(v.Sizes[1]); ss != nil {
		t.Errorf("a size with no latency points has series %+v", ss)
	}
}

func TestRFC2544SectionHasItsChartsAndATablePerTest(t *testing.T) {
	d, _ := handRFCView(t)
	r, page := buildHTML(t, []Document{d})
	var titles []string
	for _, c := range r.Charts() {
		titles = append(titles, c.Title)
	}
	// One latency chart: 64 B did not finish the latency test.
	if got := strings.Join(titles, "|"); got != "Throughput (NDR, PDR)|Frame rate (NDR, PDR)|Frame loss rate|Latency at load, 1518 B" {
		t.Errorf("charts %q", got)
	}
	s := r.Sections[0]
	var names []string
	for _, tb := range s.Lead {
		names = append(names, tb.Name)
	}
	if fmt.Sprint(names) != "[throughput latency loss backtoback]" {
		t.Fatalf("tables %v", names)
	}
	// Sizes as rows, smallest first; each test lists the sizes that did it.
	tp, lat, loss, b2b := s.Lead[0], s.Lead[1], s.Lead[2], s.Lead[3]
	// 64 B's NDR is this host's limit: a lower bound, marked in its cells.
	if len(tp.Rows) != 2 || tp.Rows[0][0] != "64" || tp.Rows[0][1] != "≥ 5000" || tp.Rows[0][3] != "≥ 3.4" || tp.Rows[1][3] != "75.0" || tp.Rows[1][6] != "0.200" {
		t.Errorf("throughput rows %q", tp.Rows)
	}
	if fmt.Sprint(lat.Head) != "[size (B) 10 % 50 % 100 %]" || len(lat.Rows) != 1 ||
		fmt.Sprint(lat.Rows[0]) != "[1518 1.500 / 2.000 / 3.000 2.000 / 3.000 / 4.000 * 4.000 / 6.000 / 9.000]" {
		t.Errorf("latency %q %q", lat.Head, lat.Rows)
	}
	if len(loss.Rows) != 2 || loss.Rows[0][1] != "97.00 *" || loss.Rows[0][2] != "96.00" || loss.Rows[0][3] != "–" || loss.Rows[1][3] != "87.50" {
		t.Errorf("loss rows %q", loss.Rows)
	}
	if len(b2b.Rows) != 1 || fmt.Sprint(b2b.Rows[0]) != "[1518 12.5 1520.0 12 13 2 yes]" {
		t.Errorf("back-to-back rows %q", b2b.Rows)
	}
	for _, want := range []string{`data-table="loss"`, "<caption>Back-to-back frames", "1518 B: a warning of one size",
		"a warning of the run", "interrupted: only what is shown"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestRFC2544SVGHooks: the charts' groups carry the series and points.
func TestRFC2544SVGHooks(t *testing.T) {
	d, _ := handRFCView(t)
	r, _ := buildHTML(t, []Document{d})
	for _, c := range r.Charts() {
		b, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		series, points := svgGroups(t, b, "wb-series"), svgGroups(t, b, "wb-point")
		want := map[string][2]int{"Throughput (NDR, PDR)": {3, 4},
			// As a share of the medium's frame rate, its line at 100 %.
			"Frame rate (NDR, PDR)": {3, 4}, "Frame loss rate": {2, 5}, "Latency at load, 1518 B": {4, 6}}[c.Title]
		if len(series) != want[0] || len(points) != want[1] {
			t.Errorf("%s: %d series, %d points, want %v", c.Title, len(series), len(points), want)
		}
	}
}

// TestRFC2544LineRateOffScale: a run far below its medium's rate (the
// real run in testdata: a 10 Mbit/s reflector measured on eth100) keeps
// the axis on its rates, leaves the line out and says where it is.
func TestRFC2544LineRateOffScale(t *testing.T) {
	d := loadDoc(t, "rfc2544.json")
	var v result.RFC2544
	if err := d.view(&v); err != nil {
		t.Fatal(err)
	}
	ss, note := rfcThroughputSeries(&v)
	if got := fmt.Sprint(rolesOf(ss)); got != "[ndr pdr]" || !strings.Contains(note, "line rate (eth100)") || !strings.Contains(note, "off this scale") {
		t.Errorf("roles %s, note %q", got, note)
	}
	r, page := buildHTML(t, []Document{d})
	if !strings.Contains(page, note) || len(r.Charts()) == 0 {
		t.Errorf("the page lacks the note %q", note)
	}
	// Each warning once: the run's list already holds each size's.
	for _, w := range r.Sections[0].Warnings {
		if n := strings.Count(page, ">warning: "+template.HTMLEscapeString(w)+"<"); n != 1 {
			t.Errorf("warning %q shown %d times", w, n)
		}
	}
}

// TestRFC2544LatencyTitleByKind: the latency table names what the points
// measured — round trip (also when no kind is given), one way, or delay
// variation, which it says is not latency.
func TestRFC2544LatencyTitleByKind(t *testing.T) {
	_, v := handRFCView(t)
	for kind, want := range map[string]string{"": "round trip", "round_trip": "round trip", "one_way": "one way, same clock",
		"delay_variation": "Delay variation at load (NOT latency"} {
		for i := range v.Sizes[0].Latency {
			v.Sizes[0].Latency[i].Kind = kind
		}
		if got := rfcLatencyTable(v).Title; !strings.Contains(got, want) {
			t.Errorf("kind %q: title %q, want it to say %q", kind, got, want)
		}
	}
}

// A PDR whose loss no trial measured (null in the JSON) is unknown, and the
// table says so rather than printing a measured-looking 0.000.
func TestRFC2544UnknownPDRLossIsNotZero(t *testing.T) {
	_, v := handRFCView(t)
	tb := rfcThroughputTable(v)
	if got := tb.Rows[0][6]; got != "0.200" {
		t.Fatalf("measured PDR loss reads %q, want 0.200", got)
	}
	v.Sizes[0].PDR.LossPercent = nil
	tb = rfcThroughputTable(v)
	if got := tb.Rows[0][6]; got != "–" {
		t.Errorf("unknown PDR loss reads %q, want –", got)
	}
}

// TestRFC2544StallingHostPage: the report of a run recorded on a stalling
// host (../testdata/rfc2544-stalling.json, the text report's golden run)
// opens with the throughput table, before any warning or chart; each cause
// is one warning under the table it qualifies, inside a collapsed
// <details>; and a back-to-back search that sent its passes slowly and lost
// bursts in our stalls shows a bound or "not measured", not its figure.
func TestRFC2544StallingHostPage(t *testing.T) {
	d := loadDoc(t, "../../testdata/rfc2544-stalling.json")
	var v result.RFC2544
	if err := d.view(&v); err != nil {
		t.Fatal(err)
	}
	r, page := buildHTML(t, []Document{d})
	s := r.Sections[0]
	start := strings.Index(page, `<section class="doc" data-kind="rfc2544">`)
	body := page[start:]
	first := strings.Index(body, `<table class="summary" data-table="throughput">`)
	if first < 0 {
		t.Fatal("no throughput table")
	}
	for _, later := range []string{`class="warn"`, "<figure", `data-table="latency"`} {
		if i := strings.Index(body, later); i >= 0 && i < first {
			t.Errorf("%s comes before the throughput table", later)
		}
	}
	fs := findings.Of(&v)
	shown := 0
	for _, tb := range s.Lead {
		shown += len(tb.Warnings)
	}
	if shown != len(fs) || strings.Count(body, ">warning: ") != len(fs)+len(s.Warnings) {
		t.Errorf("%d table warnings, %d on the page, for %d causes and %d of the run's", shown, strings.Count(body, ">warning: "), len(fs), len(s.Warnings))
	}
	for _, f := range fs {
		p := `<p class="warn">warning: ` + template.HTMLEscapeString(f.Text) + `</p>`
		i := strings.Index(body, p)
		if i < 0 || strings.Count(body, p) != 1 {
			t.Errorf("cause %s shown %d times", f.Cause, strings.Count(body, p))
			continue
		}
		if open := strings.LastIndex(body[:i], `<details class="warnings"`); open < 0 || strings.Contains(body[open:i], "</details>") {
			t.Errorf("cause %s is not inside a <details> under its table", f.Cause)
		}
		if strings.Contains(f.Text, "upper bound") && strings.Contains(f.Text, "lower bound") {
			t.Errorf("cause %s says both bounds: %q", f.Cause, f.Text)
		}
	}
	b2b := s.Lead[len(s.Lead)-1]
	both := 0
	for _, z := range v.Sizes {
		bb := z.BackToBack
		if bb == nil || bb.AtLineRate || !bb.HostSpoiled {
			continue
		}
		both++
		for _, row := range b2b.Rows {
			if row[0] == fmt.Sprint(z.Size) && (row[1] == fmt.Sprint(z.BackToBackFrames) || row[3] != "–" || !strings.ContainsAny(row[1], "≥≤–") && row[1] != "not measured") {
				t.Errorf("%d B back-to-back row %q: want a bound or not measured, no min and max", z.Size, row)
			}
		}
	}
	if both == 0 {
		t.Error("the recorded run has no size whose back-to-back search both sent slowly and lost in a stall")
	}
}

// TestRFC2544DecidedStallsAreANote: throughput trials this host spoiled,
// each run again until a clean run decided, are said under the table as a
// note (collapsed, after any warnings), not as a warning on its figures.
func TestRFC2544DecidedStallsAreANote(t *testing.T) {
	doc := strings.Replace(handRFC2544, `"done":["throughput","loss"]}`,
		`"done":["throughput","loss"],"discounted_trials":2,"discounted":[{"search":"NDR","rate_pps":5000,"then":"run_again"},{"search":"PDR","rate_pps":5100,"then":"run_again"}]}`, 1)
	d, err := Decode("rfc.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r, page := buildHTML(t, []Document{d})
	tb := r.Sections[0].Lead[0]
	if tb.Name != "throughput" || len(tb.Notes) != 1 || !strings.Contains(tb.Notes[0].Text, "host stalls spoiled 2 throughput trials at 64 B") {
		t.Fatalf("table %s: notes %+v", tb.Name, tb.Notes)
	}
	for _, w := range tb.Warnings {
		if strings.Contains(w.Text, "host stalls") {
			t.Errorf("the decided stalls are also a warning: %q", w.Text)
		}
	}
	p := `<p class="note">note: ` + template.HTMLEscapeString(tb.Notes[0].Text) + `</p>`
	i := strings.Index(page, p)
	if i < 0 || strings.Count(page, p) != 1 {
		t.Fatalf("the note is shown %d times", strings.Count(page, p))
	}
	if open := strings.LastIndex(page[:i], `<details class="notes" data-notes="1">`); open < 0 || strings.Contains(page[open:i], "</details>") {
		t.Error("the note is not inside a <details> of notes")
	}
}
