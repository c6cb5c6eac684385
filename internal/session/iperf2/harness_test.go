package iperf2

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// guard bounds every wait in these tests. It is not a timed assertion: a
// test that reaches it has hung, and says so.
const guard = 20 * time.Second

// testServer is an in-process wirebench server on an ephemeral loopback
// port, with everything it reports collected for the test to inspect.
type testServer struct {
	t    *testing.T
	srv  *session.Server
	addr string // 127.0.0.1:port, TCP and UDP

	cancel context.CancelFunc
	done   chan error

	mu      sync.Mutex
	results []*result.Result
	taken   map[*result.Result]bool // results resultFrom already returned
	logs    []string
	changed chan struct{} // closed and replaced on every new result or log
}

// startServer listens on 127.0.0.1 (any port; cfg.Bind when set: its
// address is then also the test's) with cfg and serves in a goroutine
// until the test ends (or stop is called).
func startServer(t *testing.T, cfg session.ServerConfig) *testServer {
	t.Helper()
	ts := &testServer{t: t, done: make(chan error, 1), changed: make(chan struct{})}
	host := "127.0.0.1"
	switch cfg.Bind {
	case "":
		cfg.Bind = host
	case "::", "0.0.0.0":
	default:
		host = cfg.Bind
	}
	cfg.Port = -1
	onResult, onLog := cfg.OnResult, cfg.OnLog
	cfg.OnResult = func(id int, r *result.Result) {
		if onResult != nil {
			onResult(id, r)
		}
		ts.mu.Lock()
		ts.results = append(ts.results, r)
		ts.notifyLocked()
		ts.mu.Unlock()
	}
	cfg.OnLog = func(msg string) {
		if onLog != nil {
			onLog(msg)
		}
		ts.mu.Lock()
		ts.logs = append(ts.logs, msg)
		ts.notifyLocked()
		ts.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Listen(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("Listen: %v", err)
	}
	ts.srv, ts.cancel = srv, cancel
	ts.addr = net.JoinHostPort(host, strconv.Itoa(srv.Port()))
	go func() { ts.done <- srv.Serve(ctx) }()
	t.Cleanup(func() { ts.stop() })
	return ts
}

func (ts *testServer) notifyLocked() {
	close(ts.changed)
	ts.changed = make(chan struct{})
}

// stop ends Serve and waits for it to return (bounded). It may be called
// more than once.
func (ts *testServer) stop() {
	ts.t.Helper()
	ts.cancel()
	select {
	case err, ok := <-ts.done:
		if ok && err != nil {
			ts.t.Errorf("Serve returned %v", err)
		}
		if ok {
			close(ts.done)
		}
	case <-time.After(guard):
		ts.t.Fatalf("Serve did not return within %v of its context ending", guard)
	}
}

// waitFor waits until cond holds over the results and logs so far, or
// fails the test after the guard time, saying what it waited for.
func (ts *testServer) waitFor(what string, cond func(results []*result.Result, logs []string) bool) {
	ts.t.Helper()
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for {
		ts.mu.Lock()
		ok := cond(ts.results, ts.logs)
		ch := ts.changed
		ts.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			ts.mu.Lock()
			defer ts.mu.Unlock()
			ts.t.Fatalf("waited %v for %s; results %d, logs:\n%s", guard, what, len(ts.results), strings.Join(ts.logs, "\n"))
		}
	}
}

// waitIdle waits until none of the goroutines the server started for
// tests (sending for -R and connect-back, TCP tests) is still running.
func (ts *testServer) waitIdle() {
	ts.t.Helper()
	deadline := time.Now().Add(guard)
	for ts.srv.Running() > 0 {
		if time.Now().After(deadline) {
			ts.t.Fatalf("waited %v for the server's tests to end; %d still run", guard, ts.srv.Running())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// resultFrom waits for the result of the test whose peer is peer
// ("ip:port") that no earlier call returned: the kernel may give a later
// client the source port of an earlier one, and each run has its own test.
func (ts *testServer) resultFrom(peer string) *result.Result {
	ts.t.Helper()
	var got *result.Result
	ts.waitFor("the result of the test from "+peer, func(rs []*result.Result, _ []string) bool {
		for _, r := range rs {
			if r.Test.Peer == peer && !ts.taken[r] {
				got = r
				if ts.taken == nil {
					ts.taken = map[*result.Result]bool{}
				}
				ts.taken[r] = true
				return true
			}
		}
		return false
	})
	return got
}

// waitResults waits until at least n results arrived and returns them.
func (ts *testServer) waitResults(n int) []*result.Result {
	ts.t.Helper()
	var got []*result.Result
	ts.waitFor(strconv.Itoa(n)+" results", func(rs []*result.Result, _ []string) bool {
		got = append([]*result.Result(nil), rs...)
		return len(rs) >= n
	})
	return got
}

// waitLog waits for a log line containing sub.
func (ts *testServer) waitLog(sub string) string {
	ts.t.Helper()
	var line string
	ts.waitFor("a log line containing "+strconv.Quote(sub), func(_ []*result.Result, logs []string) bool {
		for _, l := range logs {
			if strings.Contains(l, sub) {
				line = l
				return true
			}
		}
		return false
	})
	return line
}

// resultCount returns how many results arrived so far.
func (ts *testServer) resultCount() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.results)
}

// deadlineCtx is a context for a stand-in peer (which insists on a
// deadline), ended with the test.
func deadlineCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// receiver returns r.Receiver or fails the test.
func receiverOf(t *testing.T, r *result.Result) *result.Receiver {
	t.Helper()
	if r.Receiver == nil {
		t.Fatalf("result has no receiver: %+v", r)
	}
	return r.Receiver
}

// notCPUWarnings is ws without the "this host's CPU was the limit"
// warning: on loopback an unpaced TCP sender is limited by this host's CPU
// (the process also holds the server in most of these tests), and fillCPU
// rightly says so. Any other warning still counts.
func notCPUWarnings(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !strings.HasPrefix(w, "this host's CPU was the limit") {
			out = append(out, w)
		}
	}
	return out
}

// dupsOf is a receiver's duplicate count, -1 when it is unknown (nil).
func dupsOf(r *result.Receiver) int64 {
	if r == nil || r.Duplicates == nil {
		return -1
	}
	return *r.Duplicates
}
