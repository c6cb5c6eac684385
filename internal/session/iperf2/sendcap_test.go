package iperf2

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// capServer runs an iperf2 server with cfg on loopback; its test starts,
// results and log lines come on the channels.
func capServer(t *testing.T, cfg session.ServerConfig) (port int, started chan int, results chan *result.Result, logs chan string) {
	t.Helper()
	started, results, logs = make(chan int, 16), make(chan *result.Result, 16), make(chan string, 256)
	cfg.Bind, cfg.Port = "127.0.0.1", -1
	cfg.OnTestStart = func(id int, _ *result.Result) { started <- id }
	onResult := cfg.OnResult
	cfg.OnResult = func(id int, r *result.Result) {
		results <- r
		if onResult != nil {
			onResult(id, r)
		}
	}
	cfg.OnLog = func(m string) {
		select {
		case logs <- m:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Listen(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Port(), started, results, logs
}

// waitLog waits for a log line containing want.
func waitLog(t *testing.T, logs <-chan string, want string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-logs:
			if strings.Contains(m, want) {
				return m
			}
		case <-deadline:
			t.Fatalf("no log line with %q within 30 s", want)
			return ""
		}
	}
}

// waitStart waits for a test to be announced.
func waitStart(t *testing.T, started <-chan int) {
	t.Helper()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("no test started within 30 s")
	}
}

// dialTCP connects to the server on port and writes b (nothing when nil).
func dialTCP(t *testing.T, port int, b []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if b != nil {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// closedByServer reports whether the server closed c (a read ends with
// EOF or a reset) rather than holding it until the deadline.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestTCPTestsHaveAGlobalCap: iperf 2 TCP tests from any sources share
// --max-tests; before, only the per-source limit (256) bounded them, so
// many sources could hold any number of tests and goroutines. A test over
// the cap is closed without an acknowledgement and logged; a slot given
// back is taken again, by a client that starts its next test while the
// result of its last is still being handed on (the server gave the slot
// back only after, and refused such a client now and then).
func TestTCPTestsHaveAGlobalCap(t *testing.T) {
	handing := make(chan struct{})
	var once sync.Once
	resume := func() { once.Do(func() { close(handing) }) }
	port, started, results, logs := capServer(t, session.ServerConfig{MaxTests: 2,
		OnResult: func(int, *result.Result) { <-handing }})
	t.Cleanup(resume) // before the server's own cleanup waits for it
	hdr := header60(1, iperf2.AmountForDuration(30*time.Second))
	c1 := dialTCP(t, port, hdr)
	dialTCP(t, port, hdr)
	waitStart(t, started)
	waitStart(t, started)
	c3 := dialTCP(t, port, hdr)
	line := waitLog(t, logs, "--max-tests")
	if !strings.Contains(line, "2 TCP tests are running") {
		t.Errorf("log line %q does not say how many run", line)
	}
	if !closedByServer(c3) {
		t.Error("the test over the cap was held open, not closed")
	}
	select {
	case id := <-started:
		t.Fatalf("test %d started over the cap", id)
	default:
	}
	c1.Close()
	waitResult(t, results) // and the server is still handing it on
	dialTCP(t, port, hdr)
	select {
	case <-started: // c1's slot is free again
	case m := <-logs:
		t.Errorf("the test after c1's was refused while c1's result was handed on: %s", m)
	case <-time.After(30 * time.Second):
		t.Error("no test started within 30 s")
	}
	resume()
}

// TestAcceptClosesConnectionsOverTheCap: connections beyond
// MaxOpenConnsPerTest × --max-tests being served are closed as they are
// accepted, before a goroutine waits for their header; before, each
// waited out the header timeout on a goroutine of its own.
func TestAcceptClosesConnectionsOverTheCap(t *testing.T) {
	port, _, _, logs := capServer(t, session.ServerConfig{MaxTests: 1, HeaderTimeout: time.Minute})
	for range admit.ConnsPerTest {
		dialTCP(t, port, nil) // silent: each holds a handler waiting for its header
	}
	over := dialTCP(t, port, nil)
	waitLog(t, logs, "connections are open")
	if !closedByServer(over) {
		t.Error("the connection over the cap was held open, not closed")
	}
}

// TestServerCapsReverseRateByDefault: with no --max-rate given, a UDP -R
// test (one datagram with a spoofable source asks for it) is sent at
// admit.DefaultMaxSendRate at most, said in the result and once in the
// log; before, the server sent at whatever rate the header asked.
func TestServerCapsReverseRateByDefault(t *testing.T) {
	port, _, results, logs := capServer(t, session.ServerConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := runClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: port, UDP: true, Reverse: true,
		Rate: units.Rate{Value: 5e9}, Bytes: 3e6, Length: 1470})
	if err != nil {
		t.Fatal(err)
	}
	r := waitResult(t, results)
	if r.Test.RateBPS > admit.DefaultMaxSendRate*(1+1e-9) {
		t.Errorf("server sent at %.0f bit/s, want at most %.0f", r.Test.RateBPS, admit.DefaultMaxSendRate)
	}
	if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, "the client asked for 5.00 Gbits/sec; this server sends at most 1.00 Gbits/sec (--max-rate)") {
		t.Errorf("warnings %q", w)
	}
	waitLog(t, logs, "asked this server to send at 5.00 Gbits/sec; sending at 1.00 Gbits/sec (--max-rate)")
}

// TestServerSaysItCutTheDuration: a reverse test asking to run longer than
// --max-duration is cut to it, as before, and now the result and the log
// say so (before, silently).
func TestServerSaysItCutTheDuration(t *testing.T) {
	for _, udp := range []bool{true, false} {
		port, _, results, logs := capServer(t, session.ServerConfig{MaxDuration: 300 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, _ = runClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: port, UDP: udp, Reverse: true,
			Rate: units.Rate{Value: 1e6}, Duration: 2 * time.Second})
		cancel()
		r := waitResult(t, results)
		if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, "the client asked for 2s; this server sends for at most 300ms (--max-duration)") {
			t.Errorf("udp %v: warnings %q", udp, w)
		}
		waitLog(t, logs, "asked this server to send for 2s; sending for 300ms (--max-duration)")
	}
}
