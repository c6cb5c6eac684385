package cli

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

func TestJoinOptionalValues(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"client", "h", "--latency", "icmp"}, []string{"client", "h", "--latency=icmp"}},
		{[]string{"client", "h", "--latency", "udp", "-t", "2"}, []string{"client", "h", "--latency=udp", "-t", "2"}},
		{[]string{"client", "h", "--latency", "-t", "2"}, []string{"client", "h", "--latency", "-t", "2"}},
		{[]string{"client", "--latency", "h"}, []string{"client", "--latency", "h"}}, // h is the host
		{[]string{"client", "h", "--latency=icmp"}, []string{"client", "h", "--latency=icmp"}},
		{[]string{"client", "h", "--", "--latency", "icmp"}, []string{"client", "h", "--", "--latency", "icmp"}},
		{[]string{"client", "h", "--latency"}, []string{"client", "h", "--latency"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, " "), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, joinOptionalValues(tt.in)); diff != "" {
				t.Errorf("join(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestUsageErrors checks that malformed command lines give one clear line
// on stderr and exit code 2, without touching the network.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"client", "127.0.0.1", "-u", "-b", "fast"}, "invalid rate"},
		{[]string{"client", "127.0.0.1", "-b", "10M"}, "add -u"},
		{[]string{"client", "127.0.0.1", "-t", "-1"}, "invalid duration"},
		{[]string{"client", "127.0.0.1", "-n", "lots"}, "invalid byte count"},
		{[]string{"client", "127.0.0.1", "-l", "1.5"}, "invalid size"},
		{[]string{"client", "127.0.0.1", "-u", "-l", "8"}, "out of range"},
		{[]string{"client", "127.0.0.1", "-P", "0"}, "invalid -P 0"},
		{[]string{"client", "127.0.0.1", "-p", "70000"}, "port"},
		{[]string{"client", "127.0.0.1", "--dialect", "iperf9"}, `invalid --dialect "iperf9": want one of`},
		{[]string{"client", "127.0.0.1", "-R", "-d"}, "at most one"},
		{[]string{"client", "127.0.0.1", "-R", "--dialect", "iperf2-legacy"}, "need the iperf2"},
		{[]string{"client", "127.0.0.1", "-L", "5002"}, "add -r or -d"},
		{[]string{"client", "127.0.0.1", "--json", "--csv"}, "choose one"},
		{[]string{"client", "127.0.0.1", "--medium", "eth7"}, "medium"},
		{[]string{"client"}, "a host is missing"},
		{[]string{"-c"}, "a host is missing"},
		{[]string{"-uc"}, "a host is missing"},
		{[]string{"-c", "-u", "-t", "1"}, "a host is missing"},
		{[]string{"--client"}, "a host is missing"},
		{[]string{"ping"}, "a host is missing"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"client", "127.0.0.1", "-u", "-l", "100000"}, "out of range"},
		{[]string{"client", "127.0.0.1", "-p", "5201", "-u", "-l", "100000"}, "out of range"},
		{[]string{"client", "127.0.0.1", "-p", "70000"}, "invalid port 70000"},
		{[]string{"client", "127.0.0.1", "--bidir"}, "need the iperf3 dialect"},
		{[]string{"client", "127.0.0.1", "--frobnicate"}, "unknown flag"},
		{[]string{"-c", "127.0.0.1", "-x"}, "unknown shorthand flag"},
		{[]string{"server", "--idle-timeout", "-3"}, "invalid --idle-timeout"},
		{[]string{"server", "extra"}, "expected no arguments"},
		{[]string{"server", "-p", "99999"}, "invalid port"},
		{[]string{"client", "127.0.0.1", "-w", "big"}, "invalid -w"},
		{[]string{"client", "127.0.0.1", "-M", "20"}, "invalid -M"},
		{[]string{"client", "127.0.0.1", "-S", "0x100"}, "invalid -S"},
		{[]string{"client", "127.0.0.1", "-T", "256"}, "invalid -T"},
		{[]string{"client", "127.0.0.1", "-B", "10.0.0.1%eth0"}, "device"},
		{[]string{"client", "127.0.0.1", "-B", "10.0.0.1:0"}, "invalid -B"},
		{[]string{"client", "127.0.0.1", "-B", "10.0.0.1:6000", "--cport", "7000"}, "drop --cport"},
		{[]string{"client", "127.0.0.1", "--cport", "65535", "-P", "2"}, "client port"},
		{[]string{"server", "-S", "loud"}, "invalid -S"},
		{[]string{"client", "127.0.0.1", "-f", "t"}, "invalid -f"},
		{[]string{"server", "-f", "mm"}, "invalid -f"},
		{[]string{"client", "127.0.0.1", "-O", "-1"}, "invalid -O"},
		{[]string{"client", "127.0.0.1", "-O", "61"}, "invalid -O"},
		{[]string{"client", "127.0.0.1", "--omit", "x"}, "invalid argument"},
		{[]string{"client", "127.0.0.1", "-O", "1", "-n", "1M"}, "does not combine with -n"},
		{[]string{"client", "127.0.0.1", "-p", "5201", "-O", "1", "-n", "1M"}, "does not combine with -n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) { wantUsageError(t, tt.args, tt.want) })
	}
}

// wantUsageError runs wirebench with args and checks that it exits 2 with
// one error line containing want.
func wantUsageError(t *testing.T, args []string, want string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	if code != exitUsage {
		t.Fatalf("exit code %d, want %d; stderr %q", code, exitUsage, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("printed before the usage error:\n%s", out.String())
	}
	msg := errb.String()
	if !strings.Contains(msg, want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
		t.Errorf("stderr %q: want one line containing %q", msg, want)
	}
}

// TestUnreachablePeer: a client whose server does not answer fails with
// exit code 1 and says what it was doing.
func TestUnreachablePeer(t *testing.T) {
	var out, errb bytes.Buffer
	// Port 9 (discard) on loopback: nothing listens there in the test.
	code := run(context.Background(), []string{"client", "127.0.0.1", "-p", "9", "-t", "1"}, &out, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "connecting to 127.0.0.1:9") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if strings.Contains(out.String(), "connected with") {
		t.Errorf("a refused connection printed a connected line:\n%s", out.String())
	}
	errb.Reset()
	out.Reset()
	code = run(context.Background(), []string{"client", "127.0.0.1", "-p", "9", "--dialect", "iperf3", "-t", "1"}, &out, &errb)
	if code != exitFailure || strings.Contains(out.String(), "connected with") {
		t.Fatalf("iperf3: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	errb.Reset()
	code = run(context.Background(), []string{"client", "127.0.0.1", "-p", "9", "-u", "-t", "1", "-b", "1M"}, &out, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "refused") {
		t.Fatalf("udp: exit %d, stderr %q", code, errb.String())
	}
}

// fullDisk fails every write, like stdout redirected to /dev/full.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestOutputWriteFailure: output that could not be written is an error
// (exit 1, said once on stderr), never a silent success.
func TestOutputWriteFailure(t *testing.T) {
	for _, args := range [][]string{
		{"version"},
		{"calc", "--medium", "eth100", "--proto", "udp", "--payload", "1470"},
		{"calc", "--medium", "eth100", "--proto", "udp", "--payload", "1470", "--json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var errb bytes.Buffer
			if code := run(context.Background(), args, fullDisk{}, &errb); code != exitFailure {
				t.Errorf("exit %d, want %d; stderr %q", code, exitFailure, errb.String())
			}
			if n := strings.Count(errb.String(), "\n"); n != 1 || !strings.Contains(errb.String(), "no space left on device") {
				t.Errorf("stderr %q, want one line naming the write error", errb.String())
			}
		})
	}
}

// TestIperf3UDPBannerLength: the iperf3 UDP banner names the datagram size
// that is sent (iperf3's 1460 bytes, not iperf2's 1470), even when the
// test then fails to connect.
func TestIperf3UDPBannerLength(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"client", "127.0.0.1", "-p", "9", "--dialect", "iperf3", "-u", "-t", "1"}, &out, &errb)
	if code != exitFailure || !strings.Contains(out.String(), "Sending 1460 byte datagrams") {
		t.Errorf("exit %d, banner:\n%s%s", code, out.String(), errb.String())
	}
}

// TestConnectedLineAfterConnect: against a real iperf server the client's
// "connected with" line comes once, after the banner, naming the local and
// the peer's port of the connection that exists.
func TestConnectedLineAfterConnect(t *testing.T) {
	port := startRealServer(t, "iperf", "iperf (2.1.8)")
	text, errText, code := runWhileStarting(t, []string{"client", "127.0.0.1", "-p", port, "-t", "0.3"})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	want := regexp.MustCompile(`(?m)^-{60}\n\[  1\] local 127\.0\.0\.1 port \d+ connected with 127\.0\.0\.1 port ` + port + `\n`)
	if strings.Count(text, "connected with") != 1 || !want.MatchString(text) {
		t.Errorf("want one connected line with both ports right after the banner:\n%s", text)
	}
}

// startRealServer starts the real "bin -s" (iperf or iperf3) on a free
// loopback port for the test's lifetime and returns the port; it skips the
// test when bin (what) is not installed.
func startRealServer(t *testing.T, bin, what string) string {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err != nil {
		t.Skipf("%s is not installed: apt-get install %s", what, bin)
	}
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	srv := exec.CommandContext(ctx, path, "-s", "-B", "127.0.0.1", "-p", port)
	if err := srv.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = srv.Wait() })
	return port
}

// runWhileStarting runs wirebench with args, again while the server it
// talks to is still starting (connection refused, at most 50 × 20 ms), and
// returns its stdout, stderr and exit code.
func runWhileStarting(t *testing.T, args []string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	for try := 0; ; try++ {
		out.Reset()
		errb.Reset()
		code := run(ctx, args, &out, &errb)
		if code == exitOK || try == 50 || !strings.Contains(errb.String(), "refused") {
			return out.String(), errb.String(), code
		}
		time.Sleep(20 * time.Millisecond) // the server is still starting
	}
}
