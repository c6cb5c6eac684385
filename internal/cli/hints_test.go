package cli

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// TestIperf2AgainstIperf3Hint runs an iperf2-dialect TCP test (asked for
// by name: without --dialect the client would probe and choose iperf3)
// against a real iperf3 server, which resets it early: the error must name
// the likely mismatch and --dialect iperf3. (A reset later than the first
// 5 s, on a very loaded host, is a warning with the same hint.)
func TestIperf2AgainstIperf3Hint(t *testing.T) {
	port := startRealServer(t, "iperf3", "iperf3 (3.12)")
	out, errText, code := runWhileStarting(t, []string{"client", "127.0.0.1", "-p", port, "-t", "5", "--dialect", "iperf2"})
	if code != exitFailure {
		t.Fatalf("exit %d, want %d:\n%s%s", code, exitFailure, out, errText)
	}
	if !strings.Contains(out+errText, "the peer reset the connection") || !strings.Contains(out+errText, "--dialect iperf3") {
		t.Errorf("no --dialect iperf3 hint:\n%s%s", out, errText)
	}
}

// TestServerIperf3PortTaken: when the iperf3 port is taken, the server
// fails (exit 1) with an error that suggests --iperf3-port 0.
func TestServerIperf3PortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"server", "-B", "127.0.0.1", "-p", port, "--iperf3-port", busy}, &out, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "address already in use") || !strings.Contains(errb.String(), "--iperf3-port 0") {
		t.Fatalf("exit %d, stderr %q: want exit 1 and a hint at --iperf3-port 0", code, errb.String())
	}
	if strings.Contains(out.String(), "listening") {
		t.Errorf("printed a listening banner before failing:\n%s", out.String())
	}
}
