package web

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// storeHistory is a History that is not the dashboard's Memory, as a
// results store is: it already holds runs, so its run ids are not the
// server's test numbers, and it saves each run after the test ended.
type storeHistory struct{ mem *Memory }

func (h storeHistory) List(ctx context.Context, f Filter) ([]RunSummary, error) {
	return h.mem.List(ctx, f)
}
func (h storeHistory) Get(ctx context.Context, id int64) (*Run, error) { return h.mem.Get(ctx, id) }
func (h storeHistory) Save(r *result.Result) (int64, error)            { return h.mem.Add(r, nil) }

// The card of a running test in headless Chromium, on a server whose
// results store already holds runs: the card names the test "live N" (the
// server's test number, never shown as a run id), its chart is on the
// card while the test runs (how long after the card's first interval is
// logged), and once the store saves the run the card links to the run id
// the history lists it under.
func TestLiveCardInChromium(t *testing.T) {
	path := chromium(t)
	hist := storeHistory{NewMemory(0, 0)}
	for i := range 4 {
		if _, err := hist.Save(udpResult(fmt.Sprintf("192.0.2.%d:5001", i+1), 1000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	ts := startTestServer(t, Config{History: hist}, time.Second) // a server's intervals with --web

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
	// The page notes, on the monotonic performance clock, when the card
	// first shows an interval and when it first holds a chart, and its
	// title then.
	const watch = `window.wbSeen = {}; new MutationObserver(() => {
	  const c = document.querySelector(".live-test"); if (!c) return;
	  const s = window.wbSeen, now = performance.now();
	  if (s.interval === undefined && c.textContent.includes("in the last interval")) s.interval = now;
	  if (s.chart === undefined && c.querySelector('figure.chart g.wb-series[data-role="received"]')) { s.chart = now; s.title = c.querySelector("h3").textContent; s.id = c.dataset.testId; }
	}).observe(document.getElementById("live"), { childList: true, subtree: true, characterData: true }); true`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](watch)); err != nil {
		t.Fatal(err)
	}
	clientDone := make(chan *result.Result, 1)
	go func() { clientDone <- ts.udpTest(t, 6*time.Second, 2e6) }()

	type seen struct {
		Interval, Chart float64
		Title, ID       string
	}
	got, err := chromedp.Run(ctx, chromedp.Poll[seen](`window.wbSeen.chart !== undefined && window.wbSeen.interval !== undefined ? window.wbSeen : null`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("the running test's card never showed its chart: %v", err)
	}
	t.Logf("the card's chart came %.0f ms after its first interval", got.Chart-got.Interval)
	if !regexp.MustCompile(`^live \d+$`).MatchString(got.Title) || got.Title != "live "+got.ID {
		t.Errorf("the running test's card is titled %q: want \"live %s\", its test number, not a name a run id could be read as", got.Title, got.ID)
	}
	var r *result.Result
	select {
	case r = <-clientDone:
	case <-ctx.Done():
		t.Fatal("the client test did not end")
	}
	if r == nil {
		t.FailNow() // udpTest reported why
	}
	const runID = 5 // the store held 4 runs
	link := fmt.Sprintf(`.ended-test[data-test-id="%s"] a[href="#/run/%d"]`, got.ID, runID)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`!!document.querySelector('%s') && !!document.querySelector('#history tbody tr[data-run-id="%d"]')`, link, runID),
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("live").textContent`))
		t.Fatalf("the ended test %s does not link to run %d, as the history lists it (%v); the live box reads %q", got.ID, runID, err, text)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".live-test").length`)); n != 0 {
		t.Errorf("%d cards still say the test is running", n)
	}

	// A parallel UDP test: each stream starts as a test of its own; none
	// is left as a running card once the test ended.
	pc := session.ClientConfig{Host: "127.0.0.1", Port: ts.port, UDP: true, Duration: 2 * time.Second, Parallel: 2}
	pc.Rate.Value = 2e6
	if _, err := dialect.RunClient(ctx, pc); err != nil {
		t.Fatalf("parallel udp test: %v", err)
	}
	if ts.next(t) == nil {
		t.FailNow()
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector('#history tbody tr[data-run-id="6"]')`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the parallel test never reached the history as run 6: %v", err)
	}
	if left, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".live-test")].map(c => c.textContent)`)); len(left) != 0 {
		t.Errorf("after the parallel test ended, cards still say they run: %q", left)
	}
}
