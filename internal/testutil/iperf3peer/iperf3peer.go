// Package iperf3peer runs the real iperf3 (3.12) as a client or a server
// for interop tests, in whichever package tests against it (the shared
// session server and the iperf3 dialect both do): the binary or a skip, a
// client with its -J report, a one-test server on a free loopback port and
// its reports.
package iperf3peer

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// Guard bounds each iperf3 process a test starts.
const Guard = 20 * time.Second

// runIperf3Client runs the real iperf3 client with args and -J, and
// returns its report and its text output (stderr included).
func RunClient(t testing.TB, port int, args ...string) (*iperf3.Report, string) {
	t.Helper()
	bin := Bin(t)
	ctx, cancel := context.WithTimeout(context.Background(), Guard)
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
	if slices.Contains(args, "-J") {
		// 3.12 prints a peer's −1 (unknown retransmits, as iperf3 itself
		// sends them) as 2^64−1, and sums of them as 2^64−n.
		body := WrapRe.ReplaceAllFunc(out.Bytes(), func(b []byte) []byte {
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

// WrapRe matches what iperf3 3.12 prints for a negative count: the
// unsigned 64-bit wrap of it (2^64−n).
var WrapRe = regexp.MustCompile(`1844674407370955\d{4}`)

// Bin returns the real iperf3 binary, or skips the test.
func Bin(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skipf("real iperf3 not installed (exec.LookPath: %v): interop with iperf3 3.12 is not tested", err)
	}
	return p
}

// Server runs `iperf3 -s -1 -J` on a loopback port until one
// test ended, and returns its port and a function that waits for its -J
// report.
func Server(t testing.TB) (int, func() *iperf3.Report) {
	t.Helper()
	port, reports := ServerReports(t)
	return port, func() *iperf3.Report {
		t.Helper()
		reps := reports()
		if len(reps) != 1 {
			t.Fatalf("iperf3 -s -1 printed %d -J documents, want 1", len(reps))
		}
		return reps[0]
	}
}

// Listening waits until iperf3 listens on port, or its process
// ended (done closed), and reports whether it listens. A probe connection
// would count as iperf3's one test: it waits instead until the port cannot
// be bound. That alone does not say whose listener it is: when another
// process (another test, or another program on a shared machine) took the
// port first, iperf3 fails to bind and exits at once, and its clients
// would talk to the other listener. So iperf3 must still run
// BindGrace after the port was seen taken.
func Listening(port int, done chan struct{}) bool {
	for range 500 {
		select {
		case <-done:
			return false
		default:
		}
		if !probeFree(port) {
			select {
			case <-done:
				return false
			case <-time.After(BindGrace):
				return true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// ServerReports is Server with extra arguments; the
// function it returns gives every -J document the server printed: 3.12
// prints one for each test refused at authentication, which does not count
// as its one test, before the one that ran.
func ServerReports(t testing.TB, extra ...string) (int, func() []*iperf3.Report) {
	t.Helper()
	bin := Bin(t)
	// The port is free when FreePort returns, but on a shared machine
	// another program may take it before iperf3 binds it (iperf3 then
	// exits at once): try another port, a few times.
	var port int
	var out, errb bytes.Buffer
	var done chan struct{}
	for try := 1; ; try++ {
		port = loopback.FreePort(t)
		ctx, cancel := context.WithTimeout(context.Background(), Guard)
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
		if Listening(port, exited) {
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
		case <-time.After(Guard):
			t.Fatalf("iperf3 -s did not end after the test")
		}
		var reps []*iperf3.Report
		// 3.12's server prints its sender sums before the client's
		// results arrive: with -O, UDP packets 0 minus its omitted
		// count, as 2^64−n.
		body := WrapRe.ReplaceAllFunc(out.Bytes(), func(b []byte) []byte {
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

// SumReceivedBytes is what a real iperf3 server counted as received.
func SumReceivedBytes(rep *iperf3.Report) int64 {
	switch {
	case rep.End.SumReceived != nil:
		return rep.End.SumReceived.Bytes
	case rep.End.Sum != nil:
		return rep.End.Sum.Bytes
	}
	return -1
}

// BindGrace is how long a peer started on a free port must keep running,
// after the port was seen taken, to count as the one that took it: iperf
// and iperf3 report a failed bind within milliseconds of starting.
const BindGrace = 100 * time.Millisecond

// probeFree says whether a listener could bind port on 127.0.0.1; the
// probe is open only while no process can be forked (loopback.NoFork), so
// that it cannot live on in a child and keep iperf3 from binding.
func probeFree(port int) bool {
	defer loopback.NoFork()()
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
