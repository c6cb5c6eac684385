package iperf3

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// A per-source limit refuses a real iperf3 client as --max-tests does:
// ACCESS_DENIED, which iperf3 prints as "the server is busy".
func TestIperf3PerSourceLimit(t *testing.T) {
	bin := iperf3Bin(t)
	// One test a source, and a bucket that refills once in 1000 s.
	ts := startI3Server(t, session.ServerConfig{MaxTestsPerSource: 1, NewTestsPerSecondPerSource: 0.001}, Config{})
	runIperf3Client(t, ts.i3port, "-t", "1")
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-c", "127.0.0.1", "-p", strconv.Itoa(ts.i3port), "-t", "1").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the server is busy running a test") {
		t.Errorf("second iperf3 test from the same source within the limit's second (exit %v):\n%s", err, out)
	}
	logs := strings.Join(ts.Logs(), "\n")
	if !strings.Contains(logs, "iperf3: refused a new test: new tests from this source come too fast: 127.0.0.1") {
		t.Errorf("no log line for the refusal:\n%s", logs)
	}
	if n := ts.count(); n != 1 {
		t.Errorf("%d results, want 1 (the refused test starts none)", n)
	}
}

// A real iperf3 client that starts its next test the moment its last one
// ends is admitted under --max-tests 1, while the server is still handing
// the last result on (printing, saving): the slot is given back first.
// Before, it was given back after, and such a client was now and then told
// "the server is busy".
func TestIperf3NextTestWhileTheLastResultIsHandedOn(t *testing.T) {
	iperf3Bin(t)
	handing := make(chan struct{})
	var first sync.Once
	ts := startI3Server(t, session.ServerConfig{MaxTests: 1, OnResult: func(int, *result.Result) {
		first.Do(func() { <-handing }) // the first result's hand-on is still under way
	}}, Config{})
	var resume sync.Once
	defer resume.Do(func() { close(handing) })
	runIperf3Client(t, ts.i3port, "-t", "1")
	ts.waitResults(1)
	runIperf3Client(t, ts.i3port, "-t", "1") // fails the test if told the server is busy
	resume.Do(func() { close(handing) })
	ts.waitResults(2)
}

// --max-rate keeps working for iperf3: an unpaced test measured above it
// is ended by the server with IETOTALRATE, and our client returns at once
// with that reason (it used to wait forever for a second control message
// after taking the server's error).
func TestIperf3MaxRateEndsOurClientsTest(t *testing.T) {
	ts := startI3Server(t, session.ServerConfig{}, Config{MaxRate: 1e6})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	type out struct {
		r   *result.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, _, err := RunClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: ts.i3port, Dialect: session.DialectIperf3, Duration: 5 * time.Second})
		done <- out{r, err}
	}()
	var o out
	select {
	case o = <-done:
	case <-time.After(guard):
		t.Fatalf("our iperf3 client did not return within %v of the server ending its test", guard)
	}
	const why = "total required bandwidth is larger than server limit"
	if o.err != nil || o.r == nil || !strings.Contains(o.r.Error, why) {
		t.Errorf("our client: err %v, result error %q; want %q", o.err, o.r.Error, why)
	}
	if rs := ts.waitResults(1); !strings.Contains(rs[0].Error, why) {
		t.Errorf("our server's result: error %q, want %q", rs[0].Error, why)
	}
}
