package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

func TestHubDropsSlowViewer(t *testing.T) {
	h := NewHub(8, 4)
	slow, err := h.subscribe()
	if err != nil {
		t.Fatal(err)
	}
	fast, err := h.subscribe()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	drain := func() { // the fast viewer reads everything sent so far
		for {
			select {
			case <-fast.ch:
				n++
			default:
				return
			}
		}
	}
	r := udpResult("192.0.2.1:1", 1, 0)
	h.Start(1, "server", r)
	drain()
	for i := 0; i < 40; i++ {
		// Publishing returns although slow reads nothing.
		h.Interval(1, result.Interval{Start: float64(i), End: float64(i + 1), Bytes: 10})
		drain()
	}
	select {
	case <-slow.gone:
	default:
		t.Fatal("a viewer 40 events behind with a buffer of 8 is still connected")
	}
	select {
	case <-fast.gone:
		t.Fatal("the viewer that kept up was dropped")
	default:
	}
	if n != 42 { // snapshot, start, 40 intervals
		t.Fatalf("the reading viewer got %d events, want 42", n)
	}
	st := h.Stats()
	if st.DroppedViewers != 1 || st.Viewers != 1 || st.LiveTests != 1 {
		t.Fatalf("stats %+v, want 1 dropped, 1 viewer, 1 live test", st)
	}
	h.unsubscribe(slow) // a dropped viewer leaving again is harmless
	h.unsubscribe(fast)
	if st := h.Stats(); st.Viewers != 0 {
		t.Fatalf("viewers after both left: %d", st.Viewers)
	}
}

func TestHubBounds(t *testing.T) {
	h := NewHub(1, 2)
	h.Start(7, "server", udpResult("192.0.2.1:1", 1, 0))
	for i := 0; i < MaxLivePoints+5; i++ {
		h.Interval(7, result.Interval{End: float64(i + 1)})
	}
	live := h.Live()
	if len(live) != 1 || len(live[0].Intervals) != MaxLivePoints || live[0].DroppedIntervals != 5 || live[0].Intervals[0].End != 6 {
		t.Fatalf("live test keeps %d intervals from %v, %d dropped; want the newest %d and 5 dropped",
			len(live[0].Intervals), live[0].Intervals[0].End, live[0].DroppedIntervals, MaxLivePoints)
	}
	for i := 0; i < 2; i++ {
		if _, err := h.subscribe(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.subscribe(); err == nil || !strings.Contains(err.Error(), "too many dashboard viewers") {
		t.Fatalf("third viewer of at most 2: %v", err)
	}
	h.End(LiveEnd{ID: 7}, 7, 8)
	if h.Active() != 0 {
		t.Fatalf("%d tests live after the end", h.Active())
	}
}

// A real UDP test appears on the event stream as start, intervals and end,
// and its finished run is in /api/runs with the server's own figures.
func TestEventsFollowATest(t *testing.T) {
	ts := startTestServer(t, Config{}, 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := openEvents(ctx, t, ts.url)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := make(chan sseEvent, 1024)
	go func() { _ = readEvents(resp.Body, func(e sseEvent) { events <- e }) }()
	if e := <-events; e.typ != "snapshot" || e.data != "[]" {
		t.Fatalf("first event %+v, want an empty snapshot", e)
	}
	r := ts.udpTest(t, 1500*time.Millisecond, 2e6)
	var types []string
	var intervals int
	var end LiveEnd
	for end.ID == 0 {
		select {
		case e := <-events:
			types = append(types, e.typ)
			switch e.typ {
			case "interval":
				intervals++
			case "end":
				if err := json.Unmarshal([]byte(e.data), &end); err != nil {
					t.Fatal(err)
				}
			}
		case <-ctx.Done():
			t.Fatalf("no end event; saw %v", types)
		}
	}
	if types[0] != "start" || intervals < 3 {
		t.Fatalf("events %v: want start, then at least 3 intervals of 200 ms in 1.5 s", types)
	}
	var runs []RunSummary
	getJSON(t, ts.url+"/api/runs?label=protocol=udp", &runs)
	if len(runs) != 1 || runs[0].ID != end.RunID || runs[0].Summary != Summarize(r) {
		t.Fatalf("runs %+v, end %+v; want the one run, summarized as %q", runs, end, Summarize(r))
	}
	var run struct {
		Result result.Result `json:"result"`
	}
	getJSON(t, ts.url+"/api/runs/"+jsonInt(end.RunID), &run)
	if run.Result.Receiver == nil || run.Result.Receiver.Bytes != r.Receiver.Bytes || len(run.Result.Intervals) != len(r.Intervals) {
		t.Fatalf("run in the API %+v differs from the server's result %+v", run.Result.Receiver, r.Receiver)
	}
	if code, body := get(t, ts.url+"/api/runs/999"); code != http.StatusNotFound || !strings.Contains(body, "no such run") {
		t.Fatalf("missing run: %d %q", code, body)
	}
	if code, body := get(t, ts.url+"/api/runs?label=nolabel"); code != http.StatusBadRequest || !strings.Contains(body, "want key=value") {
		t.Fatalf("bad label: %d %q", code, body)
	}
	if code, _ := get(t, ts.url+"/"); code != http.StatusOK {
		t.Fatalf("page: %d", code)
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// A viewer that stops reading its connection is dropped once the kernel's
// buffers and its own are full; publishing never waits for it, and a
// viewer that reads at the same time keeps up and stays.
func TestStalledViewerIsDroppedOverHTTP(t *testing.T) {
	ts := startTestServer(t, Config{ViewerBuffer: 64}, 0)
	hub := ts.web.Hub()
	u, _ := url.Parse(ts.url)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/events HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
	// conn is never read from again.

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp := openEvents(ctx, t, ts.url)
	defer resp.Body.Close()
	read := make(chan struct{}, 1<<16)
	go func() { _ = readEvents(resp.Body, func(sseEvent) { read <- struct{}{} }) }()
	<-read // its snapshot
	for hub.Stats().Viewers < 2 {
		time.Sleep(10 * time.Millisecond)
	}

	hub.Start(1, "server", udpResult("192.0.2.1:1", 1, 0))
	<-read
	const batch = 32 // half the buffer: the reading viewer is never further behind
	sent := 0
	for ; sent < 200000 && hub.Stats().DroppedViewers == 0; sent += batch {
		for i := 0; i < batch; i++ {
			n := sent + i
			hub.Interval(1, result.Interval{Start: float64(n), End: float64(n + 1), Bytes: int64(n), BitsPerSecond: 1e6, Packets: int64(n)})
		}
		for i := 0; i < batch; i++ {
			select {
			case <-read:
			case <-ctx.Done():
				t.Fatalf("the reading viewer got no event after %d", sent+i)
			}
		}
	}
	st := hub.Stats()
	if st.DroppedViewers != 1 || st.Viewers != 1 {
		t.Fatalf("hub %+v after %d events: want the stalled viewer dropped and the reading one kept", st, sent)
	}
	t.Logf("the stalled viewer was dropped after %d events", sent)
}
