package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// runServerWithIperf runs "wirebench server -1 args…" on a free loopback
// port, then the real "iperf -c … iperfArgs…" against it, and returns the
// server's output once it exited after that one test.
func runServerWithIperf(t *testing.T, args, iperfArgs []string) string {
	t.Helper()
	iperf, err := exec.LookPath("iperf")
	if err != nil {
		t.Skip("iperf (2.1.8) is not installed: apt-get install iperf")
	}
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	all := append([]string{"server", "-B", "127.0.0.1", "-p", port, "--iperf3-port", "0", "-1"}, args...)
	out, errOut, done := startServerCmd(ctx, t, all, "listening")
	cmd := exec.CommandContext(ctx, iperf, append([]string{"-c", "127.0.0.1", "-p", port, "-t", "1"}, iperfArgs...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("iperf: %v\n%s", err, b)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("the server exited with %d: %s", code, errOut.String())
		}
	case <-ctx.Done():
		t.Fatalf("the one-shot server did not exit after the test:\n%s", out.String())
	}
	return out.String()
}

// startServerCmd runs "wirebench args…" (a server) until ctx ends, and
// returns once its output says ready; done receives its exit code.
func startServerCmd(ctx context.Context, t *testing.T, args []string, ready string) (out, errOut *loopback.Buffer, done chan int) {
	t.Helper()
	out, errOut, done = &loopback.Buffer{}, &loopback.Buffer{}, make(chan int, 1)
	go func() { done <- run(ctx, args, out, errOut) }()
	for !strings.Contains(out.String()+errOut.String(), ready) {
		select {
		case code := <-done:
			t.Fatalf("the server exited with %d: %s", code, errOut.String())
		case <-ctx.Done():
			t.Fatalf("the server did not start (no %q): %s", ready, errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return out, errOut, done
}

// TestServerParallelSum: a real "iperf -c -P 3" against "wirebench server"
// prints one test with a line per stream and one SUM summary line, and
// SUM interval lines with -i; --json gives one document with the streams.
func TestServerParallelSum(t *testing.T) {
	for _, udp := range []bool{false, true} {
		iperfArgs := []string{"-P", "3", "-i", "0.5"}
		name := "tcp"
		if udp {
			iperfArgs = append(iperfArgs, "-u", "-b", "3M")
			name = "udp"
		}
		t.Run(name+" text", func(t *testing.T) {
			out := runServerWithIperf(t, []string{"-i", "0.5"}, iperfArgs)
			t.Logf("server output:\n%s", out)
			var sumSummary, streamSummary, sumIntervals int
			for _, l := range strings.Split(out, "\n") {
				switch {
				case strings.HasPrefix(l, "[SUM]") && strings.HasSuffix(l, "receiver"):
					sumSummary++
				case strings.HasSuffix(l, "receiver"):
					streamSummary++
				case strings.HasPrefix(l, "[SUM]"):
					sumIntervals++
				}
			}
			if sumSummary != 1 || streamSummary != 3 || sumIntervals < 2 {
				t.Errorf("%d SUM summary lines, %d stream summary lines, %d SUM interval lines; want 1, 3, ≥ 2", sumSummary, streamSummary, sumIntervals)
			}
			if n := strings.Count(out, "connected with"); n != 3 {
				t.Errorf("%d connected lines, want 3", n)
			}
		})
		t.Run(name+" json", func(t *testing.T) {
			out := runServerWithIperf(t, []string{"--json"}, iperfArgs)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 1 {
				t.Fatalf("%d JSON documents, want 1:\n%s", len(lines), out)
			}
			var doc struct {
				Test     struct{ Streams int }                      `json:"test"`
				Receiver struct{ Bytes int64 }                      `json:"receiver"`
				Streams  []struct{ Receiver struct{ Bytes int64 } } `json:"streams"`
			}
			if err := json.Unmarshal([]byte(lines[0]), &doc); err != nil {
				t.Fatalf("JSON: %v\n%s", err, out)
			}
			var sum int64
			for _, st := range doc.Streams {
				sum += st.Receiver.Bytes
			}
			if doc.Test.Streams != 3 || len(doc.Streams) != 3 || sum != doc.Receiver.Bytes || sum == 0 {
				t.Errorf("JSON has test.streams %d, %d streams adding up to %d bytes, receiver %d", doc.Test.Streams, len(doc.Streams), sum, doc.Receiver.Bytes)
			}
		})
	}
}

// TestServerSafetyFlags: malformed --allow-reverse and per-source limits
// are usage errors; well-formed ones run a server, and a UDP reverse test
// from loopback (always allowed) is served.
func TestServerSafetyFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow-reverse", "198.18.0.0/33"}, "invalid --allow-reverse"},
		{[]string{"--allow-reverse", "10.0.0.0/8,nonsense"}, "nonsense"},
		{[]string{"--max-tests-per-source", "-1"}, "invalid --max-tests-per-source"},
		{[]string{"--max-new-tests-per-second-per-source", "-2"}, "invalid --max-new-tests-per-second-per-source"},
		{[]string{"--max-new-tests-per-second-per-source", "NaN"}, "invalid --max-new-tests-per-second-per-source"},
		{[]string{"-i", "1e10"}, "invalid --interval"}, // over a year: the duration would overflow
		{[]string{"--max-duration", "1e300"}, "invalid --max-duration"},
	} {
		var out, errb loopback.Buffer
		args := append([]string{"server", "-B", "127.0.0.1", "-p", "0"}, tt.args...)
		if code := run(context.Background(), args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, errb.String(), exitUsage, tt.want)
		}
	}
	out := runServerWithIperf(t, []string{"--json", "--allow-reverse", "198.18.0.0/15", "--allow-reverse", "2001:2::/48,any",
		"--max-tests-per-source", "0", "--max-new-tests-per-second-per-source", "0"}, []string{"-u", "-R", "-b", "1M"})
	var r struct {
		Error  string `json:"error"`
		Sender *struct {
			Bytes int64 `json:"bytes"`
		} `json:"sender"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decoding the server's JSON: %v\n%s", err, out)
	}
	if r.Error != "" || r.Sender == nil || r.Sender.Bytes == 0 {
		t.Errorf("UDP -R from loopback: error %q, sender %+v", r.Error, r.Sender)
	}
}
