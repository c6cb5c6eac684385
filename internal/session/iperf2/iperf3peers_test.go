package iperf2

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/iperf3peer"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// Helpers for the tests here that run iperf3 beside iperf2, copied from
// internal/session/iperf3's tests (which this package cannot import).

// i3TestServer is an in-process server with iperf3 enabled on an
// ephemeral port of its own and on the iperf2 port.
type i3TestServer struct {
	t        *testing.T
	srv      *session.Server
	port     int // iperf2 port (iperf3 is sniffed there too)
	i3port   int
	cancel   context.CancelFunc
	done     chan error
	mu       sync.Mutex
	results  []*result.Result
	logs     []string
	changed  chan struct{}
	stopOnce sync.Once
}

func startI3Server(t *testing.T, cfg session.ServerConfig, i3 Iperf3Config) *i3TestServer {
	t.Helper()
	ts := &i3TestServer{t: t, done: make(chan error, 1), changed: make(chan struct{})}
	cfg.Bind, cfg.Port = "127.0.0.1", -1
	cfg.OnResult = func(id int, r *result.Result) {
		ts.mu.Lock()
		ts.results = append(ts.results, r)
		close(ts.changed)
		ts.changed = make(chan struct{})
		ts.mu.Unlock()
	}
	cfg.OnLog = func(msg string) {
		ts.mu.Lock()
		ts.logs = append(ts.logs, msg)
		ts.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Listen(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("Listen: %v", err)
	}
	if i3.Port == 0 {
		i3.Port = -1
	}
	p3, err := enableIperf3(ctx, srv, i3)
	if err != nil {
		cancel()
		t.Fatalf("iperf3.Enable: %v", err)
	}
	ts.srv, ts.cancel, ts.port, ts.i3port = srv, cancel, srv.Port(), p3
	go func() { ts.done <- srv.Serve(ctx) }()
	t.Cleanup(ts.stop)
	return ts
}

func (ts *i3TestServer) stop() {
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

func (ts *i3TestServer) count() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.results)
}

// waitResults waits for n results.
func (ts *i3TestServer) waitResults(n int) []*result.Result {
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

// The real iperf3's helpers are internal/testutil/iperf3peer's, under the
// names these tests use.

func runIperf3Client(t *testing.T, port int, args ...string) (*iperf3.Report, string) {
	return iperf3peer.RunClient(t, port, args...)
}
func iperf3Bin(t *testing.T) string                              { return iperf3peer.Bin(t) }
func realIperf3Server(t *testing.T) (int, func() *iperf3.Report) { return iperf3peer.Server(t) }
func realIperf3ServerReports(t *testing.T, extra ...string) (int, func() []*iperf3.Report) {
	return iperf3peer.ServerReports(t, extra...)
}
func sumReceivedBytes(rep *iperf3.Report) int64 { return iperf3peer.SumReceivedBytes(rep) }
func slicesContain(s []string, v string) bool   { return slices.Contains(s, v) }

// bindGrace is iperf3peer.BindGrace: how long a peer started on a free
// port must keep running to count as the one that took it.
const bindGrace = iperf3peer.BindGrace
