package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
)

// testServer is a wirebench server on 127.0.0.1 with a dashboard
// attached, serving its HTTP side through httptest.
type testServer struct {
	web  *Server
	port int // the wirebench server's TCP and UDP port
	url  string

	mu      sync.Mutex
	results map[int]*result.Result // the server's finished tests by number
	done    chan int               // test numbers as they finish
}

// testSaver is a History that saves runs itself, as a results store
// does: startTestServer saves each result in it and tells the dashboard.
type testSaver interface {
	History
	Save(r *result.Result) (int64, error)
}

// startTestServer starts it, with intervals every interval.
func startTestServer(t testing.TB, cfg Config, interval time.Duration) *testServer {
	t.Helper()
	ts := &testServer{web: New(cfg), results: map[int]*result.Result{}, done: make(chan int, 1024)}
	scfg := session.ServerConfig{Bind: "127.0.0.1", Port: -1, Interval: interval, IdleTimeout: 2 * time.Second}
	ts.web.Attach(&scfg)
	// The test hears of a result after the dashboard has counted and
	// ended it (Attach runs callbacks set before it first), so what
	// /metrics and /api/live show is settled when the test reads them.
	webResult := scfg.OnResult
	saver, _ := cfg.History.(testSaver)
	scfg.OnResult = func(id int, r *result.Result) {
		webResult(id, r)
		if saver != nil {
			// As a server with a results store does: the store saves the
			// run after the dashboard ended it, then says its id.
			run, err := saver.Save(r)
			w := ""
			if err != nil {
				w = err.Error()
			}
			ts.web.Saved(id, run, w)
		}
		ts.mu.Lock()
		ts.results[id] = r
		ts.mu.Unlock()
		select {
		case ts.done <- id:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := iperf2.Listen(ctx, scfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ts.port = srv.Port()
	echo.Register(srv, echo.ServerConfig{IdleTimeout: 2 * time.Second, OnSession: ts.web.EchoFinished})
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ctx) }()
	hs := httptest.NewServer(ts.web.Handler())
	ts.url = hs.URL
	t.Cleanup(func() {
		cancel()
		hs.CloseClientConnections()
		hs.Close()
		<-served
	})
	return ts
}

// udpTest runs a UDP client test against the server and returns the
// server's result of it.
func (ts *testServer) udpTest(t testing.TB, d time.Duration, rate float64) *result.Result {
	t.Helper()
	cfg := session.ClientConfig{Host: "127.0.0.1", Port: ts.port, UDP: true, Duration: d}
	cfg.Rate.Value = rate
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	if _, err := dialect.RunClient(ctx, cfg); err != nil {
		t.Fatalf("udp test: %v", err)
	}
	return ts.next(t)
}

// next waits for the server's next finished test and returns its result.
func (ts *testServer) next(t testing.TB) *result.Result {
	t.Helper()
	select {
	case id := <-ts.done:
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return ts.results[id]
	case <-time.After(10 * time.Second):
		t.Fatal("the server reported no result within 10 s")
		return nil
	}
}

// get fetches path and returns its status and body.
func get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// getJSON fetches path and decodes its JSON body into v.
func getJSON(t testing.TB, url string, v any) {
	t.Helper()
	code, body := get(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}

// sseEvent is one server-sent event read by readEvents.
type sseEvent struct {
	typ, data string
}

// readEvents reads the event stream of body, sending each event to out,
// until the body ends.
func readEvents(body io.Reader, out func(sseEvent)) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.typ != "" {
				out(ev)
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return sc.Err()
}

// openEvents opens the dashboard's event stream at base until ctx ends;
// the caller reads and closes the body.
func openEvents(ctx context.Context, t testing.TB, base string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// httptestServer serves s's handler on loopback until the test ends and
// returns its base URL.
func httptestServer(t testing.TB, s *Server) string {
	t.Helper()
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}
