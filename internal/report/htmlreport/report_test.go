package htmlreport

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// testdata holds documents written by wirebench --json (client, latency,
// ping, latency under load, matrix over loopback; two iperf3-dialect
// clients with the server's per-interval report, one through a token
// bucket that dropped datagrams, see comparedRuns), a sweep written by
// internal/sweep against a simulated device with a cliff, and a
// hand-written sweep in the keys the sweep command writes, and an RFC 2544
// run against a reflector model (see TestRFC2544ChartsCarryTheirDataInChromium).
func loadTestdata(t *testing.T) []Document {
	t.Helper()
	var docs []Document
	for _, name := range []string{"client.json", "matrix.json", "sweep.json", "ping.json", "latency.json", "underload.json",
		"client-iperf3-20M.json", "client-iperf3-20M-tbf16M.json", "sweep-cliff.json", "rfc2544.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		d, err := Decode(name, b)
		if err != nil {
			t.Fatalf("decoding %s: %v", name, err)
		}
		docs = append(docs, d)
	}
	return docs
}

func buildHTML(t *testing.T, docs []Document) (*Report, string) {
	t.Helper()
	r, err := Build("test report", docs)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return r, b.String()
}

func TestDecodeRejectsWhatIsNotADocument(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "not a JSON object"},
		{"array", "[1,2]", "not a JSON object"},
		{"iperf3", `{"start":{},"end":{}}`, "schema"},
		{"no kind", `{"schema":"wirebench/1"}`, "kind"},
		{"two", `{"schema":"wirebench/1","kind":"test"}{"schema":"wirebench/1","kind":"test"}`, "more than one"},
	} {
		if _, err := Decode(c.name, []byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one saying %q", c.name, err, c.want)
		}
	}
}

func TestReportHasAChartPerFigureKind(t *testing.T) {
	r, page := buildHTML(t, loadTestdata(t))
	var titles []string
	for _, c := range r.Charts() {
		titles = append(titles, c.Title)
	}
	all := strings.Join(titles, "|")
	for _, want := range []string{"Goodput by document", "Throughput over time", "Goodput per cell",
		"Throughput over time, TCP cells", "Throughput over time, UDP cells", "Sweep", "RTT", "RTT distribution",
		"Throughput (NDR, PDR)", "Frame loss rate", "Latency at load, 64 B"} {
		if !strings.Contains(all, want) {
			t.Errorf("no chart %q among %q", want, titles)
		}
	}
	if n := strings.Count(page, "<svg"); n != len(r.Charts()) {
		t.Errorf("%d inline SVGs for %d charts", n, len(r.Charts()))
	}
}

// TestReportIsSelfContained: nothing in the page makes a browser fetch
// anything — no scripts, no sources or links, no CSS urls or imports; the
// only URLs are the SVG namespace names, which are never fetched.
func TestReportIsSelfContained(t *testing.T) {
	_, page := buildHTML(t, loadTestdata(t))
	for _, bad := range []string{"<script", "src=", "href=", "url(", "@import", "<link", "<iframe", "<object", "<embed", "<img"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	for _, u := range regexp.MustCompile(`[a-z]+://[^"' <>]*`).FindAllString(page, -1) {
		if u != "http://www.w3.org/2000/svg" && u != "http://www.w3.org/1999/xlink" {
			t.Errorf("the page names URL %q", u)
		}
	}
}

// TestEveryNumberIsInTheTables: each number of each document appears in
// a table cell of the page as the document wrote it.
func TestEveryNumberIsInTheTables(t *testing.T) {
	docs := loadTestdata(t)
	_, page := buildHTML(t, docs)
	for _, d := range docs {
		n := 0
		walkNumbers(d.Tree, func(v json.Number) {
			n++
			if !strings.Contains(page, ">"+v.String()+"<") {
				t.Errorf("%s: the number %s is not in a table cell", d.Name, v)
			}
		})
		if n == 0 {
			t.Errorf("%s: no numbers found: the walk is broken", d.Name)
		}
	}
}

func walkNumbers(v any, fn func(json.Number)) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			walkNumbers(e, fn)
		}
	case []any:
		for _, e := range x {
			walkNumbers(e, fn)
		}
	case json.Number:
		fn(x)
	}
}

func TestWarningsAreShown(t *testing.T) {
	_, page := buildHTML(t, loadTestdata(t))
	if !strings.Contains(page, "a sample written by hand for the renderer") {
		t.Error("the sweep document's warning is not in the page")
	}
}

func TestTextIsEscaped(t *testing.T) {
	b := []byte(`{"schema":"wirebench/1","kind":"probe","note":"<script>alert(1)</script>"}`)
	d, err := Decode("<b>x</b>.json", b)
	if err != nil {
		t.Fatal(err)
	}
	_, page := buildHTML(t, []Document{d})
	if strings.Contains(page, "<script>") || strings.Contains(page, "<b>x") {
		t.Error("document text reached the page unescaped")
	}
}

func TestPNGsAreTheCharts(t *testing.T) {
	r, _ := buildHTML(t, loadTestdata(t))
	dir := t.TempDir()
	paths, err := r.WritePNGs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(r.Charts()) {
		t.Fatalf("%d PNGs for %d charts", len(paths), len(r.Charts()))
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if spread, coloured := lumaStdDev(img), colouredShare(img); spread < 10 || coloured < 0.002 {
			t.Errorf("%s looks blank (luminance spread %.1f, %.2f %% coloured)", p, spread, 100*coloured)
		}
	}
}

// extremeDocs are documents with figures no link produces, which once hung
// or crashed the plotting library (an infinite axis span, a log axis
// reaching 0).
var extremeDocs = []string{
	`{"schema":"wirebench/1","kind":"test","intervals":[{"start_s":0,"end_s":1,"bits_per_second":1e308},{"start_s":1,"end_s":2,"bits_per_second":-1e308}]}`,
	`{"schema":"wirebench/1","kind":"test","intervals":[{"start_s":-1e308,"end_s":1e308,"bits_per_second":5}]}`,
	`{"schema":"wirebench/1","kind":"test","intervals":[{"start_s":0,"end_s":1e-300,"bits_per_second":5},{"start_s":0,"end_s":2e-300,"bits_per_second":5}]}`,
	`{"schema":"wirebench/1","kind":"request-response","rtt":{"bins":[{"from_ms":1e-300,"to_ms":1e300,"count":5}]}}`,
	`{"schema":"wirebench/1","kind":"ping","sizes":[{"size":1,"rtt_ms":{"min":1e308,"max":-1e308}}]}`,
	`{"schema":"wirebench/1","kind":"sweep","sizes":[{"size":1,"rate_bps":1e308},{"size":2,"rate_bps":1e308}]}`,
	`{"schema":"wirebench/1","kind":"rfc2544","test":{"tests":["throughput","latency","loss","backtoback"],"latency_loads_percent":[1e308]},
	  "sizes":[{"size":1,"line_pps":1e308,"ndr_bps":1e308,"pdr_bps":-1e308,"done":["throughput","latency","loss","backtoback"],
	  "latency":[{"load_percent":1e308,"p50_ms":1e308,"max_ms":-1e308},{"load_percent":-1e308,"min_ms":1e-300}],
	  "loss_curve":[{"offered_percent":1e-300,"loss_percent":1e308},{"offered_percent":2e-300}],"back_to_back":{}}]}`,
}

func TestExtremeFiguresRenderQuickly(t *testing.T) {
	for _, s := range extremeDocs {
		d, err := Decode("extreme.json", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, page := buildHTML(t, []Document{d})
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s took %v", s, took)
		}
		if !strings.Contains(page, "</html>") {
			t.Errorf("%s: no complete page", s)
		}
	}
}

// TestSweepDecidedStallsAreANote: a sweep's trials this host spoiled, each
// decided by a clean re-run, are a note in its section, not a warning.
func TestSweepDecidedStallsAreANote(t *testing.T) {
	d, err := Decode("sweep.json", []byte(`{"schema":"wirebench/1","kind":"sweep","sizes":[{"size":1472,"rate_pps":800,"found":true,"confirmed":true,
 "trial_log":[{"repeat":1,"rate_pps":800,"trial_s":10,"verdict":"host_stalled"},{"repeat":1,"rate_pps":800,"trial_s":10,"verdict":"pass"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r, page := buildHTML(t, []Document{d})
	s := r.Sections[0]
	if len(s.Notes) != 1 || len(s.Warnings) != 0 || !strings.Contains(page, `<p class="note">note: this host spoiled 1 trial at 1472 B`) {
		t.Errorf("notes %q, warnings %q", s.Notes, s.Warnings)
	}
}
