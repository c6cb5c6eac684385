package session

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// Helpers for the tests here that run iperf3 beside iperf2, copied from
// internal/session/iperf3's tests (which this package cannot import).

// i3TestServer is an in-process server with iperf3 enabled on an
// ephemeral port of its own and on the iperf2 port.
type i3TestServer struct {
	t        *testing.T
	srv      *Server
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

func startI3Server(t *testing.T, cfg ServerConfig, i3 Iperf3Config) *i3TestServer {
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

// runIperf3Client runs the real iperf3 client with args and -J, and
// returns its report and its text output (stderr included).
func runIperf3Client(t *testing.T, port int, args ...string) (*iperf3.Report, string) {
	t.Helper()
	bin := iperf3Bin(t)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	all := append([]string{"-c", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)
	cmd := exec.CommandContext(ctx, bin, all...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	text := out.String() + errb.String()
	for _, bad := range []string{"unable to receive results", "control socket has closed unexpectedly"} {
		if strings.Contains(text, bad) {
			t.Errorf("iperf3 client said %q:\n%s", bad, text)
		}
	}
	if err != nil {
		t.Fatalf("iperf3 %v: %v\n%s", all, err, text)
	}
	var rep iperf3.Report
	if slicesContain(args, "-J") {
		// 3.12 prints a peer's −1 (unknown retransmits, as iperf3 itself
		// sends them) as 2^64−1, and sums of them as 2^64−n.
		body := wrapRe.ReplaceAllFunc(out.Bytes(), func(b []byte) []byte {
			u, _ := strconv.ParseUint(string(b), 10, 64)
			return []byte(strconv.FormatInt(int64(u), 10))
		})
		if err := json.Unmarshal(body, &rep); err != nil {
			t.Fatalf("decoding iperf3 -J: %v\n%s", err, text)
		}
	} else if !strings.Contains(text, "iperf Done.") {
		t.Errorf("iperf3 client did not end with \"iperf Done.\":\n%s", text)
	}
	return &rep, text
}

var wrapRe = regexp.MustCompile(`1844674407370955\d{4}`)

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// iperf3Bin returns the real iperf3 binary, or skips the test.
func iperf3Bin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skipf("real iperf3 not installed (exec.LookPath: %v): interop with iperf3 3.12 is not tested", err)
	}
	return p
}

// realIperf3Server runs `iperf3 -s -1 -J` on a loopback port until one
// test ended, and returns its port and a function that waits for its -J
// report.
func realIperf3Server(t *testing.T) (int, func() *iperf3.Report) {
	t.Helper()
	port, reports := realIperf3ServerReports(t)
	return port, func() *iperf3.Report {
		t.Helper()
		reps := reports()
		if len(reps) != 1 {
			t.Fatalf("iperf3 -s -1 printed %d -J documents, want 1", len(reps))
		}
		return reps[0]
	}
}

// iperf3Listening waits until iperf3 listens on port, or its process
// ended (done closed), and reports whether it listens. A probe connection
// would count as iperf3's one test: it waits instead until the port cannot
// be bound. That alone does not say whose listener it is: when another
// process (another test, or another program on a shared machine) took the
// port first, iperf3 fails to bind and exits at once, and its clients
// would talk to the other listener. So iperf3 must still run
// bindGrace after the port was seen taken.
func iperf3Listening(port int, done chan struct{}) bool {
	for range 500 {
		select {
		case <-done:
			return false
		default:
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			select {
			case <-done:
				return false
			case <-time.After(bindGrace):
				return true
			}
		}
		ln.Close()
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// realIperf3ServerReports is realIperf3Server with extra arguments; the
// function it returns gives every -J document the server printed: 3.12
// prints one for each test refused at authentication, which does not count
// as its one test, before the one that ran.
func realIperf3ServerReports(t *testing.T, extra ...string) (int, func() []*iperf3.Report) {
	t.Helper()
	bin := iperf3Bin(t)
	// The port is free when FreePort returns, but on a shared machine
	// another program may take it before iperf3 binds it (iperf3 then
	// exits at once): try another port, a few times.
	var port int
	var out, errb bytes.Buffer
	var done chan struct{}
	for try := 1; ; try++ {
		port = loopback.FreePort(t)
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		args := append([]string{"-s", "-1", "-J", "-B", "127.0.0.1", "-p", strconv.Itoa(port)}, extra...)
		cmd := exec.CommandContext(ctx, bin, args...)
		out.Reset()
		errb.Reset()
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() { cancel(); <-exited })
		done = exited
		if iperf3Listening(port, exited) {
			break
		}
		if try == 5 {
			t.Fatalf("iperf3 -s did not start on 5 free ports; the last said: %s %s", out.String(), errb.String())
		}
		t.Logf("iperf3 -s exited before listening on port %d (%s): trying another port", port, strings.TrimSpace(out.String()+errb.String()))
	}
	return port, func() []*iperf3.Report {
		t.Helper()
		select {
		case <-done:
		case <-time.After(guard):
			t.Fatalf("iperf3 -s did not end after the test")
		}
		var reps []*iperf3.Report
		// 3.12's server prints its sender sums before the client's
		// results arrive: with -O, UDP packets 0 minus its omitted
		// count, as 2^64−n.
		body := wrapRe.ReplaceAllFunc(out.Bytes(), func(b []byte) []byte {
			u, _ := strconv.ParseUint(string(b), 10, 64)
			return []byte(strconv.FormatInt(int64(u), 10))
		})
		for dec := json.NewDecoder(bytes.NewReader(body)); dec.More(); {
			var rep iperf3.Report
			if err := dec.Decode(&rep); err != nil {
				t.Fatalf("decoding iperf3 -s -J output: %v\n%s\nstderr: %s", err, out.String(), errb.String())
			}
			reps = append(reps, &rep)
		}
		return reps
	}
}

// sumReceivedBytes is what a real iperf3 server counted as received.
func sumReceivedBytes(rep *iperf3.Report) int64 {
	switch {
	case rep.End.SumReceived != nil:
		return rep.End.SumReceived.Bytes
	case rep.End.Sum != nil:
		return rep.End.Sum.Bytes
	}
	return -1
}

// bindGrace is how long a peer started on a free port must keep running,
// after the port was seen taken, to count as the one that took it: iperf
// and iperf3 report a failed bind within milliseconds of starting.
const bindGrace = 100 * time.Millisecond
