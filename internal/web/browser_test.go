package web

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/result"
)

// chromium finds the browser, or skips the test (fails it under CI=true,
// where .ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); CI is not set, so skipping the browser test")
	return ""
}

// The dashboard in headless Chromium: a test started against the server
// appears while it runs and its chart gains points; the finished run's
// page opens with its intervals; screenshots are not blank.
func TestDashboardInChromium(t *testing.T) {
	path := chromium(t)
	ts := startTestServer(t, Config{}, 250*time.Millisecond)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 120*time.Second)
	defer cancelT()

	if err := chromedp.Do(ctx, chromedp.Navigate(ts.url+"/")); err != nil {
		t.Fatalf("opening the dashboard: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("stream-state").textContent === "live"`)); err != nil {
		t.Fatalf("the page never connected to /api/events: %v", err)
	}

	clientDone := make(chan *result.Result, 1)
	go func() { clientDone <- ts.udpTest(t, 4*time.Second, 2e6) }()

	// The live card's charts come from /api/live/ID/charts, refetched as
	// intervals arrive: the throughput's received series gains points.
	const livePoints = `(() => { const g = document.querySelector('.live-test figure.chart[data-title="Throughput over time"] g.wb-series[data-role="received"]'); return g ? g.dataset.points.split(/\s+/).filter(Boolean).length : 0; })()`
	first, err := chromedp.Run(ctx, chromedp.Poll[int](livePoints+" || 0", chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil || first < 1 {
		t.Fatalf("the live chart has %d points (%v)", first, err)
	}
	grown, err := chromedp.Run(ctx, chromedp.Poll[int](fmt.Sprintf(`(() => { const n = %s; return n > %d ? n : 0; })()`, livePoints, first),
		chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("the live chart did not gain points beyond %d while the test ran: %v", first, err)
	}
	live := pageCharts(ctx, t, ".live-test .charts")
	if got := pageTitles(live); got != "Throughput over time|Loss over time|Jitter over time" {
		t.Errorf("live charts %q, want the throughput, loss and jitter of a UDP test", got)
	}
	liveShot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("live chart: %d points, then %d", first, grown)

	var r *result.Result
	select {
	case r = <-clientDone:
	case <-ctx.Done():
		t.Fatal("the client test did not end")
	}
	if r == nil {
		t.FailNow() // udpTest reported why
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll(".live-test").length === 0 && !!document.querySelector('#history tbody tr[data-run-id="1"]')`)); err != nil {
		t.Fatalf("the finished test did not leave the live list for the history: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#history tbody tr[data-run-id="1"] a`)), chromedp.WaitVisible(chromedp.CSS("#intervals"))); err != nil {
		t.Fatalf("opening the run's page: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#intervals tr.interval-row").length`))
	if err != nil || rows != len(r.Intervals) || rows == 0 {
		t.Fatalf("the run's page shows %d intervals (%v), the result has %d", rows, err, len(r.Intervals))
	}
	title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#run-title")))
	if err != nil || !strings.Contains(title, Summarize(r)) {
		t.Fatalf("run title %q (%v), want the summary %q", title, err, Summarize(r))
	}
	run := pageCharts(ctx, t, "#run-charts")
	if got := pageTitles(run); got != "Throughput over time|Loss over time|Jitter over time" {
		t.Errorf("the run's charts %q, want the throughput, loss and jitter of a UDP test", got)
	} else if n := run[0].Series["received (receiver)"]; n < 2 || n > 2*len(r.Intervals) {
		t.Errorf("the run's throughput draws %d points for %d intervals (a step each, none past the end)", n, len(r.Intervals))
	}
	runShot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}

	// A run with warnings and a medium shows both.
	warned := udpResult("192.0.2.9:5001", 1000, 4)
	warned.Warn("our socket receive buffer dropped 4 datagrams (SO_RXQ_OVFL)")
	warned.Link = &result.Link{Medium: "eth100", TheoreticalBPS: 95.7e6, PercentOfTheoretical: 8.4}
	warned.Intervals = udpIntervals(4, 1)
	id, err := ts.web.memory.Add(warned, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/#/run/%d", ts.url, id)), chromedp.WaitVisible(chromedp.CSS(".run-warning"))); err != nil {
		t.Fatalf("opening run %d: %v", id, err)
	}
	page, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#run-body")))
	if err != nil {
		t.Fatal(err)
	}
	if cs := pageCharts(ctx, t, "#run-charts"); len(cs) == 0 || strings.Join(cs[0].Roles, " ") != "received medium" {
		t.Errorf("run %d's throughput chart: %+v, want what arrived and the medium's line", id, cs)
	}
	flat := strings.Join(strings.Fields(page), " ")
	for _, want := range []string{"Warning: our socket receive buffer dropped 4 datagrams", "8.4 % of theoretical", "medium eth100", "lost 4/1000"} {
		if !strings.Contains(flat, want) {
			t.Errorf("run %d's page lacks %q:\n%s", id, want, page)
		}
	}
	checkScreenshots(t, map[string][]byte{"live": liveShot, "run": runShot})
}

// pixelSpread is the standard deviation of a PNG's luminance and its
// number of distinct colours, from row top down.
func pixelSpread(t *testing.T, b []byte, top int) (float64, int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	var sum, sq, n float64
	colours := map[[3]uint32]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y + top; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(bl)) / 257
			sum += l
			sq += l * l
			n++
			if len(colours) < 1<<16 {
				colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	mean := sum / n
	return math.Sqrt(max(sq/n-mean*mean, 0)), len(colours)
}

// A stored sweep's page draws its curve (one point per size, the line's
// curve beside it), marks and lists its cliff and shows every size's
// figures; ticking two runs in the history and pressing Compare shows
// both values of each figure, the verdict and the regression coloured; a
// matrix shows its cells and a latency run its figures.
func TestSweepAndCompareInChromium(t *testing.T) {
	path := chromium(t)
	s := New(Config{})
	res := testSweep(t)
	sweepID := addSweep(t, s, res)
	a, _ := s.memory.Add(udpRun("192.0.2.1:5001", 10e6, 0, 0.20), map[string]string{"fw": "1.3"})
	b, _ := s.memory.Add(udpRun("192.0.2.1:5001", 8e6, 10, 0.20), map[string]string{"fw": "1.4"})
	base := httptestServer(t, s)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()

	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/#/run/%d", base, sweepID)), chromedp.WaitVisible(chromedp.CSS("#sweep-points"))); err != nil {
		t.Fatalf("opening the sweep's page: %v", err)
	}
	count := func(js string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return n
	}
	withLine := 0
	for _, sr := range res.Sizes {
		if sr.LinePPS > 0 {
			withLine++
		}
	}
	// Both charts, as the report draws them: a point per size, the line
	// dashed beside it, the cliff marked.
	charts := pageCharts(ctx, t, "#run-charts")
	if got := pageTitles(charts); got != "Sweep|Sweep, datagrams/s" {
		t.Fatalf("the sweep's charts %q, want its goodput and datagram rate", got)
	}
	for _, c := range charts {
		if c.Points != len(res.Sizes) || c.Series["measured (loss-free rate)"] != len(res.Sizes) || c.Series["theoretical limit (eth100)"] != withLine || c.Cliffs != len(res.Cliffs) {
			t.Errorf("chart %q: %d points, series %v, %d cliffs; want %d sizes, %d with the line, %d cliffs", c.Title, c.Points, c.Series, c.Cliffs, len(res.Sizes), withLine, len(res.Cliffs))
		}
	}
	// One chart opened alone (N.svg) is drawn in its colours under the
	// server's Content-Security-Policy too.
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/api/runs/%d/charts/1.svg", base, sweepID))); err != nil {
		t.Fatalf("opening 1.svg: %v", err)
	}
	if stroke, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("g.wb-series path")).stroke`)); err != nil || stroke != "rgb(31, 119, 180)" {
		t.Errorf("1.svg: the first series' stroke is %q (%v), want the palette's first colour", stroke, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/#/run/%d", base, sweepID)), chromedp.WaitVisible(chromedp.CSS("#sweep-points"))); err != nil {
		t.Fatalf("opening the sweep's page again: %v", err)
	}
	for _, c := range []struct {
		what, js string
		want     int
	}{
		{"cliff rows", `document.querySelectorAll("#cliffs tr.cliff-row").length`, len(res.Cliffs)},
		{"size rows", `document.querySelectorAll("#sweep-points tr.sweep-point").length`, len(res.Sizes)},
	} {
		if got := count(c.js); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#sweep-points tr.sweep-point")].map(tr => [...tr.cells].slice(0, 3).map(c => c.textContent).join(" "))`))
	if err != nil {
		t.Fatal(err)
	}
	for i, sr := range res.Sizes {
		want := fmt.Sprintf("%d %.0f %.2f", sr.Size, sr.RatePPS, sr.RateBPS/1e6)
		if i >= len(rows) || rows[i] != want {
			t.Errorf("size row %d = %q, want %q", i, rows[i:min(i+1, len(rows))], want)
		}
	}
	cliff, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#cliffs tbody")))
	c0 := res.Cliffs[0]
	if err != nil || !strings.Contains(cliff, fmt.Sprint(c0.Below)) || !strings.Contains(cliff, fmt.Sprint(c0.Above)) || !strings.Contains(cliff, c0.Hint) {
		t.Errorf("the cliffs table %q (%v) lacks %d/%d or its hint %q", cliff, err, c0.Below, c0.Above, c0.Hint)
	}
	sweepShot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}

	// Tick A, then B, in the history and press Compare.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#history tr[data-run-id="%d"] input.pick`, b))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#history tr[data-run-id="%d"] input.pick`, a))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#history tr[data-run-id="%d"] input.pick`, b))),
		chromedp.Click(chromedp.CSS("#compare-picked")),
		chromedp.WaitVisible(chromedp.CSS("#compare-table"))); err != nil {
		t.Fatalf("comparing runs %d and %d from the history: %v", a, b, err)
	}
	if h, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`)); h != fmt.Sprintf("#/compare/%d/%d", a, b) {
		t.Errorf("Compare went to %q, want run %d as the baseline", h, a)
	}
	row, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelector('#compare-table tr[data-metric="throughput"]').cells].map(c => c.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"throughput", "10.00 Mbit/s", "8.00 Mbit/s", "80.0 %", "−2.00 Mbit/s", "worse"}; strings.Join(row, "|") != strings.Join(want, "|") {
		t.Errorf("throughput row %q, want %q", row, want)
	}
	cls, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#compare-table tr[data-metric="throughput"]').className`))
	bg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('#compare-table tr[data-metric="throughput"] td')).backgroundColor`))
	plain, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('#compare-table tr[data-metric="jitter_ms"] td')).backgroundColor`))
	if !strings.Contains(cls, "worse") || bg == plain {
		t.Errorf("the regression is not coloured: class %q, background %s (an unchanged row: %s)", cls, bg, plain)
	}
	// Runs are named by the labels that tell them apart, as the CLI does.
	if title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#compare-title"))); err != nil || title != fmt.Sprintf("fw=1.4 (run %d) against fw=1.3 (run %d)", b, a) {
		t.Errorf("compare title %q (%v), want the runs named by their fw labels", title, err)
	}
	verdict, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#compare-verdict")))
	if err != nil || !strings.HasPrefix(verdict, "Regression: throughput, loss_percent worse") {
		t.Errorf("verdict %q (%v)", verdict, err)
	}
	if cs := pageCharts(ctx, t, "#compare-charts"); len(cs) != 1 || cs[0].Bars != 2 {
		t.Errorf("the comparison's charts %+v, want one with a bar per run", cs)
	}
	compareShot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}

	// A run's "compare with…" form makes it the baseline.
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/#/run/%d", base, b)), chromedp.WaitVisible(chromedp.CSS("#compare-other")),
		chromedp.SendKeys(chromedp.CSS("#compare-other"), fmt.Sprint(a)), chromedp.Click(chromedp.CSS("form.compare-with button")),
		chromedp.WaitVisible(chromedp.CSS("#compare-table"))); err != nil {
		t.Fatalf("compare with… from run %d: %v", b, err)
	}
	if v, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#compare-verdict"))); !strings.HasPrefix(v, "Improvement") {
		t.Errorf("run %d against run %d: verdict %q, want an improvement", a, b, v)
	}

	// A matrix shows its cells; a latency run its figures.
	f := func(v float64) *float64 { return &v }
	mx := &matrix.Result{Schema: result.Schema, Kind: matrix.Kind, StartedAt: time.Now().UTC(), Host: "192.0.2.7", Port: 5001, Dialect: "iperf2", Duration: 2, Warnings: []string{},
		Cells: []matrix.Cell{{Protocol: result.TCP, Direction: matrix.Upload, BitsPerSecond: f(94.276e6), Status: "ok"},
			{Protocol: result.UDP, Direction: matrix.Download, Status: "unsupported", Reason: "the peer cannot send"}}}
	mxID, _ := s.memory.AddDoc(RunSummary{Kind: mx.Kind, StartedAt: mx.StartedAt, Target: "192.0.2.7:5001", Summary: "matrix"}, mx)
	rr := &result.Latency{Schema: result.Schema, Kind: "request-response", StartedAt: time.Now().UTC(), Warnings: []string{},
		RTTStats: result.RTTStats{Sent: 100, Received: 99, Timeouts: 1, LossPct: 1, RequestsPerSecond: 49.5,
			RTT: result.RTTSummary{Count: 99, Mean: 0.512, StdDev: 0.1, P50: 0.431, P99: 2.25}}}
	rrID, _ := s.memory.AddDoc(RunSummary{Kind: rr.Kind, StartedAt: rr.StartedAt, Target: "192.0.2.7:5001", Summary: "latency"}, rr)
	for _, c := range []struct {
		id         int64
		sel, want1 string
		rows       int
	}{
		{mxID, "#matrix-cells", "94.28", 2},
		{rrID, "#figures", "rtt_p99_ms2.25ms", 5},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/#/run/%d", base, c.id)), chromedp.WaitVisible(chromedp.CSS(c.sel))); err != nil {
			t.Fatalf("opening run %d: %v", c.id, err)
		}
		n := count(fmt.Sprintf(`document.querySelectorAll("%s tbody tr").length`, c.sel))
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`[...document.querySelectorAll("%s tbody tr")].map(tr => tr.textContent).join("\n")`, c.sel)))
		if n != c.rows || !strings.Contains(text, c.want1) {
			t.Errorf("run %d: %s has %d rows, want %d, with %q:\n%s", c.id, c.sel, n, c.rows, c.want1, text)
		}
		if c.id == mxID {
			if cs := pageCharts(ctx, t, "#run-charts"); len(cs) != 1 || cs[0].Bars != 1 {
				t.Errorf("the matrix's charts %+v, want the goodput of its one measured cell", cs)
			}
		}
	}
	checkScreenshots(t, map[string][]byte{"sweep": sweepShot, "compare": compareShot})
}

// checkScreenshots fails for a screenshot that looks blank below the
// header bar (41 px, which alone would make a blank page look busy), and
// keeps each in $WIREBENCH_SCREENSHOT_DIR when set.
func checkScreenshots(t *testing.T, shots map[string][]byte) {
	t.Helper()
	for name, shot := range shots {
		sd, colours := pixelSpread(t, shot, 60)
		t.Logf("%s screenshot: %d bytes; below the header luminance std dev %.1f, %d colours", name, len(shot), sd, colours)
		if sd < 10 || colours < 64 {
			t.Errorf("%s screenshot looks blank below the header: luminance std dev %.1f, %d colours", name, sd, colours)
		}
		if dir := os.Getenv("WIREBENCH_SCREENSHOT_DIR"); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, "dashboard-"+name+".png"), shot, 0o644)
		}
	}
}
