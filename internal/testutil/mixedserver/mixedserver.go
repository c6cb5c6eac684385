// Package mixedserver is an in-process wirebench server on ephemeral
// loopback ports that answers iperf2 and iperf3 (on the iperf2 port and on
// a port of iperf3's own), collecting its results, for the tests of
// internal/session/iperf2 and internal/session/iperf3. Those tests cannot
// import a package that imports their own, so they hand in how the
// dialects are set up.
package mixedserver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// guard bounds every wait. It is not a timed assertion: a test that
// reaches it has hung, and says so.
const guard = 20 * time.Second

// Server is a running server and what it reported.
type Server struct {
	t *testing.T
	// Srv is the server; Port its iperf2 port (iperf3 is sniffed there
	// too), I3Port iperf3's own port.
	Srv          *session.Server
	Port, I3Port int

	cancel   context.CancelFunc
	done     chan error
	mu       sync.Mutex
	results  []*result.Result
	logs     []string
	changed  chan struct{}
	stopOnce sync.Once
}

// Start opens a server with cfg on 127.0.0.1 through listen (a server
// answering iperf2), lets enable3 add iperf3 to it (returning iperf3's own
// port) and serves until the test ends (or Stop).
func Start(t *testing.T, cfg session.ServerConfig,
	listen func(context.Context, session.ServerConfig) (*session.Server, error),
	enable3 func(context.Context, *session.Server) (int, error)) *Server {
	t.Helper()
	ts := &Server{t: t, done: make(chan error, 1), changed: make(chan struct{})}
	cfg.Bind, cfg.Port = "127.0.0.1", -1
	onResult := cfg.OnResult // the caller's, called after the result is kept
	cfg.OnResult = func(id int, r *result.Result) {
		ts.mu.Lock()
		ts.results = append(ts.results, r)
		close(ts.changed)
		ts.changed = make(chan struct{})
		ts.mu.Unlock()
		if onResult != nil {
			onResult(id, r)
		}
	}
	cfg.OnLog = func(msg string) {
		ts.mu.Lock()
		ts.logs = append(ts.logs, msg)
		ts.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := listen(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("Listen: %v", err)
	}
	p3, err := enable3(ctx, srv)
	if err != nil {
		cancel()
		t.Fatalf("enabling iperf3: %v", err)
	}
	ts.Srv, ts.cancel, ts.Port, ts.I3Port = srv, cancel, srv.Port(), p3
	go func() { ts.done <- srv.Serve(ctx) }()
	t.Cleanup(ts.Stop)
	return ts
}

// Stop ends Serve and waits for it (bounded); it may be called again.
func (ts *Server) Stop() {
	ts.stopOnce.Do(func() {
		ts.cancel()
		select {
		case err := <-ts.done:
			if err != nil {
				ts.t.Errorf("Serve: %v", err)
			}
		case <-time.After(guard):
			ts.t.Errorf("Serve did not return within %v", guard)
		}
	})
}

// Count is how many results the server handed on so far.
func (ts *Server) Count() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.results)
}

// WaitResults waits for n results and returns all so far.
func (ts *Server) WaitResults(n int) []*result.Result {
	ts.t.Helper()
	deadline := time.After(guard)
	for {
		ts.mu.Lock()
		if len(ts.results) >= n {
			out := append([]*result.Result(nil), ts.results...)
			ts.mu.Unlock()
			return out
		}
		ch := ts.changed
		logs := strings.Join(ts.logs, "\n")
		ts.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			ts.t.Fatalf("waited %v for %d results; logs:\n%s", guard, n, logs)
		}
	}
}

// Results returns the results so far.
func (ts *Server) Results() []*result.Result {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]*result.Result(nil), ts.results...)
}

// Logs returns the server's log lines so far.
func (ts *Server) Logs() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.logs...)
}
