package htmlreport

import (
	"bytes"
	"context"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds Debian's chromium, or skips the test — except on CI
// (CI=true), where it must run: .ci/run and scripts/test install it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed, and CI must run the browser test: apt-get install chromium (.ci/run, scripts/test)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); CI runs this test")
	return ""
}

// TestReportRendersInHeadlessChromium is issue 12's "the HTML report opens
// in headless Chromium with no network, and its charts render (checked from
// a screenshot in a test)". The browser gets no usable network (every host
// name resolves to nothing, every request goes to a dead proxy); the test
// records every request the page makes, screenshots each chart and checks
// it is not blank — its pixels' luminance spreads, and some carry the
// series' colours (axes, grid and text are grey) — and checks the same
// measures call an empty box blank.
func TestReportRendersInHeadlessChromium(t *testing.T) {
	bin := chromiumPath(t)
	if testing.Short() {
		t.Skip("starting a browser takes seconds; skipped with -short")
	}
	r, page := buildHTML(t, loadTestdata(t))
	var mu sync.Mutex
	var requests []string
	bctx, pageURL := openInChromium(t, bin, page, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	})
	ids, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("figure.chart")).map(f => f.id)`))
	if err != nil {
		t.Fatalf("listing the charts: %v", err)
	}
	if len(ids) != len(r.Charts()) || len(ids) == 0 {
		t.Fatalf("the page shows %d charts, the report has %d", len(ids), len(r.Charts()))
	}
	for _, id := range ids {
		shot, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.ID(id)))
		if err != nil {
			t.Fatalf("screenshot of %s: %v", id, err)
		}
		spread, coloured, w, h := shotSpread(t, shot)
		t.Logf("%s: %dx%d px, luminance spread %.1f, %.2f %% coloured (data)", id, w, h, spread, 100*coloured)
		if w < 200 || h < 100 || spread < 10 || coloured < 0.002 {
			t.Errorf("chart %s did not render: %dx%d px, luminance spread %.1f, %.2f %% of pixels coloured", id, w, h, spread, 100*coloured)
		}
	}
	// The measure itself: an empty box of the same page must look blank.
	if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`(() => { const d = document.createElement("div");
		d.id = "blank-control"; d.style = "width:600px;height:300px;background:#fff";
		document.body.prepend(d); return null })()`)); err != nil {
		t.Fatalf("adding the blank control: %v", err)
	}
	shot, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.ID("blank-control")))
	if err != nil {
		t.Fatalf("screenshot of the blank control: %v", err)
	}
	if spread, coloured, _, _ := shotSpread(t, shot); spread >= 10 || coloured >= 0.002 {
		t.Errorf("an empty box has luminance spread %.1f, %.2f %% coloured: the blank check cannot tell", spread, 100*coloured)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(requests) == 0 {
		t.Fatal("no request seen at all, not even the page's own: the request listener is not working")
	}
	for _, u := range requests {
		if u != pageURL && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page made a request for %s", u)
		}
	}
}

// openInChromium writes page to a file and opens it in headless Chromium
// with no usable network (every host name resolves to nothing, every
// request goes to a dead proxy), calling listen with the browser's events.
// It returns the browser's context (closed when the test ends) and the
// page's URL.
func openInChromium(t *testing.T, bin, page string, listen func(any)) (context.Context, string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: file}).String()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("proxy-server", "127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1200, 900),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	t.Cleanup(func() { bcancel(); acancel(); cancel() })
	if err := chromedp.Do(bctx, chromedp.Navigate(pageURL), chromedp.WaitVisible(chromedp.CSS("figure.chart svg"))); err != nil {
		t.Fatalf("opening the report in chromium: %v", err)
	}
	return bctx, pageURL
}

func shotSpread(t *testing.T, shot []byte) (spread, coloured float64, w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("decoding a screenshot: %v", err)
	}
	b := img.Bounds()
	return lumaStdDev(img), colouredShare(img), b.Dx(), b.Dy()
}
