package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// rfcDoc is the keys of testdata/rfc2544.json the tests check the page
// against. The file was written by `wirebench rfc2544 127.0.0.1 --mode
// reflect --medium eth100 --sizes 64,512,1518 --trial 500ms --confirm 2s
// --json` against `wirebench reflect --model rate=10mbit,queue=50ms` on
// loopback, on a busy 2-core host (the same document as
// internal/report/htmlreport's testdata). This host could not always offer
// the rates asked (the run's warnings say so), and 512 B found no NDR, so
// it has no latency points: the page must show that case too.
type rfcDoc struct {
	Kind string `json:"kind"`
	Test struct {
		Host  string    `json:"host"`
		Port  int       `json:"port"`
		Tests []string  `json:"tests"`
		Loads []float64 `json:"latency_loads_percent"`
	} `json:"test"`
	Warnings []string `json:"warnings"`
	Sizes    []struct {
		Size      int               `json:"size"`
		NDRPPS    float64           `json:"ndr_pps"`
		PDRPPS    float64           `json:"pdr_pps"`
		NDRBPS    float64           `json:"ndr_bps"`
		PDRBPS    float64           `json:"pdr_bps"`
		LinePPS   float64           `json:"line_pps"`
		Latency   []json.RawMessage `json:"latency"`
		LossCurve []json.RawMessage `json:"loss_curve"`
		Done      []string          `json:"done"`
	} `json:"sizes"`
}

func loadRFC2544(t testing.TB) (json.RawMessage, rfcDoc) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "rfc2544.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d rfcDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Kind != "rfc2544" || len(d.Sizes) == 0 {
		t.Fatalf("testdata/rfc2544.json: kind %q, %d sizes", d.Kind, len(d.Sizes))
	}
	return b, d
}

// addRFC2544 keeps the document in the server's memory history, as the
// results store hands a saved run over.
func addRFC2544(t testing.TB, s *Server) (int64, rfcDoc) {
	t.Helper()
	raw, d := loadRFC2544(t)
	id, err := s.memory.AddDoc(RunSummary{Kind: d.Kind, Target: fmt.Sprintf("%s:%d", d.Test.Host, d.Test.Port),
		Summary: fmt.Sprintf("rfc2544 reflect, %d sizes", len(d.Sizes)), Labels: map[string]string{"dut": "reflector"}}, raw)
	if err != nil {
		t.Fatal(err)
	}
	return id, d
}

// rfcPage is what the browser reads of an RFC 2544 run's page.
type rfcPage struct {
	Throughput map[string]int // series name -> points
	Loss       map[string]int
	Latency    []map[string]int // per latency chart
	LatencyIDs []string
	Rows       map[string]int // table id -> rows
	FirstRow   string
	LineNote   string
	Warnings   []string
}

func (d rfcDoc) countDone(test string) (sizes, points int) {
	for _, z := range d.Sizes {
		for _, x := range z.Done {
			if x != test {
				continue
			}
			sizes++
			switch test {
			case "loss":
				points += len(z.LossCurve)
			case "latency":
				points += len(z.Latency)
			}
		}
	}
	return sizes, points
}

// A saved RFC 2544 run comes back from /api/runs/ID as it was saved, and
// the page loads the script that draws it.
func TestAPIRFC2544Run(t *testing.T) {
	s := New(Config{})
	id, _ := addRFC2544(t, s)
	raw, _ := loadRFC2544(t)
	base := httptestServer(t, s)
	resp, err := http.Get(fmt.Sprintf("%s/api/runs/%d", base, id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var run struct {
		Kind   string          `json:"kind"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	if err := json.Compact(&want, raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&got, run.Result); err != nil {
		t.Fatal(err)
	}
	if run.Kind != "rfc2544" || got.String() != want.String() {
		t.Errorf("run %d: kind %q, the document came back changed (%d bytes, want %d)", id, run.Kind, got.Len(), want.Len())
	}
	for path, want := range map[string]string{"/": `src="rfc2544.js"`, "/rfc2544.js": "function rfc2544Parts("} {
		r, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("%s: status %d, no %q", path, r.StatusCode, want)
		}
	}
}

// A saved RFC 2544 run's page draws its throughput per size (NDR, PDR
// and the line rate, a point per size), its frame loss curve (a series per
// size, a point per step) and a latency chart per size (p50, p99, min and
// max, a point per load), and lists each test's table with a row per size.
func TestRFC2544RunInChromium(t *testing.T) {
	path := chromium(t)
	s := New(Config{})
	id, d := addRFC2544(t, s)
	base := httptestServer(t, s)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/#/run/%d", base, id)), chromedp.WaitVisible(chromedp.CSS("#rfc-throughput"))); err != nil {
		t.Fatalf("opening the RFC 2544 run's page: %v", err)
	}
	js := `(() => ({
	    Rows: Object.fromEntries(["rfc-throughput", "rfc-latency", "rfc-loss", "rfc-backtoback"].map(id =>
	      [id, document.querySelectorAll("#" + id + " tbody tr").length])),
	    Warnings: [...document.querySelectorAll(".run-warning")].map(w => w.textContent),
	    FirstRow: [...document.querySelector("#rfc-throughput tbody tr").cells].slice(0, 3).map(c => c.textContent).join(" "),
	  }))()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[rfcPage](js))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	// The charts are the report's (htmlreport), read through their hooks.
	for _, c := range pageCharts(ctx, t, "#run-charts") {
		switch {
		case c.Title == "Throughput (NDR, PDR)":
			got.Throughput, got.LineNote = c.Series, c.Caption
		case c.Title == "Frame rate (NDR, PDR)":
			if c.Series["NDR (no loss)"] == 0 || len(c.Series) != 3 {
				t.Errorf("the frame rate chart has series %v, want the NDR, PDR and the medium's frame rate", c.Series)
			}
		case c.Title == "Frame loss rate":
			got.Loss = c.Series
		case strings.HasPrefix(c.Title, "Latency at load, "):
			got.Latency, got.LatencyIDs = append(got.Latency, c.Series), append(got.LatencyIDs, c.Title)
		default:
			t.Errorf("unexpected chart %q", c.Title)
		}
	}
	t.Logf("page: throughput %v, loss %v, latency %v %v, rows %v, %d warnings", got.Throughput, got.Loss, got.LatencyIDs, got.Latency, got.Rows, len(got.Warnings))

	tpSizes, _ := d.countDone("throughput")
	// The line rate is drawn unless it is over 3× the highest rate
	// measured; then a note says so (this run: 10 Mbit/s on eth100).
	dataMax, lineMax := 0.0, 0.0
	for _, z := range d.Sizes {
		dataMax, lineMax = max(dataMax, z.NDRBPS, z.PDRBPS), max(lineMax, z.LinePPS*8*float64(z.Size))
	}
	// A size where no rate passed has no NDR (or PDR) point.
	withNDR, withPDR := 0, 0
	for _, z := range d.Sizes {
		if slices.Contains(z.Done, "throughput") && z.NDRPPS > 0 {
			withNDR++
		}
		if slices.Contains(z.Done, "throughput") && z.PDRPPS > 0 {
			withPDR++
		}
	}
	if withNDR == tpSizes {
		t.Fatalf("the test file has no size without an NDR; it is there to show how one is drawn")
	}
	wantSeries := map[string]int{"NDR (no loss)": withNDR, "PDR (loss ≤ 0.5 %)": withPDR}
	if offScale := lineMax > 3*dataMax; !offScale {
		wantSeries["line rate (eth100)"] = tpSizes
	} else if !strings.Contains(got.LineNote, "off this scale") {
		t.Errorf("the line rate is %.0f× the rates and not drawn, yet no note says so: %q", lineMax/dataMax, got.LineNote)
	}
	if fmt.Sprint(got.Throughput) != fmt.Sprint(wantSeries) {
		t.Errorf("throughput chart series %v, want %v", got.Throughput, wantSeries)
	}
	lossSizes, lossPoints := d.countDone("loss")
	n := 0
	for _, z := range d.Sizes {
		if pts, ok := got.Loss[fmt.Sprintf("%d B", z.Size)]; ok {
			n += pts
			if pts != len(z.LossCurve) {
				t.Errorf("loss series %d B: %d points, want %d", z.Size, pts, len(z.LossCurve))
			}
		}
	}
	if len(got.Loss) != lossSizes || n != lossPoints {
		t.Errorf("loss chart series %v, want %d series, %d points", got.Loss, lossSizes, lossPoints)
	}
	// A size whose latency test found no load to run at (no NDR) has no
	// chart; its row in the table says why.
	latSizes := 0
	for _, z := range d.Sizes {
		if len(z.Latency) > 0 {
			latSizes++
		}
	}
	if len(got.Latency) != latSizes || latSizes == 0 {
		t.Errorf("%d latency charts %v, want one per size with latency points (%d)", len(got.Latency), got.LatencyIDs, latSizes)
	}
	for i, c := range got.Latency {
		var want int
		for _, z := range d.Sizes {
			if got.LatencyIDs[i] == fmt.Sprintf("Latency at load, %d B", z.Size) {
				want = len(z.Latency)
			}
		}
		if len(c) != 4 || c["p50"] != want || c["p99"] != want || c["min"] != want || c["max"] != want {
			t.Errorf("%s: series %v, want p50, p99, min, max with %d points each", got.LatencyIDs[i], c, want)
		}
	}
	for id, test := range map[string]string{"rfc-throughput": "throughput", "rfc-latency": "latency", "rfc-loss": "loss", "rfc-backtoback": "backtoback"} {
		if want, _ := d.countDone(test); got.Rows[id] != want {
			t.Errorf("table %s: %d rows, want %d", id, got.Rows[id], want)
		}
	}
	seen := map[string]bool{}
	for _, w := range got.Warnings {
		if seen[w] {
			t.Errorf("warning %q shown twice", w)
		}
		seen[w] = true
	}
	if len(got.Warnings) != len(d.Warnings) {
		t.Errorf("%d warnings shown, the run has %d", len(got.Warnings), len(d.Warnings))
	}
	z := d.Sizes[0]
	if want := fmt.Sprintf("%d %.0f %.3f", z.Size, z.NDRPPS, z.NDRBPS/1e6); got.FirstRow != want {
		t.Errorf("first throughput row %q, want %q", got.FirstRow, want)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	checkScreenshots(t, map[string][]byte{"rfc2544": shot})
}
