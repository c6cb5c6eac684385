package cli

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// TestIperf2AgainstIperf3Hint runs an iperf2-dialect TCP test against a
// real iperf3 server, which resets it early: the output must hint at
// --dialect iperf3.
func TestIperf2AgainstIperf3Hint(t *testing.T) {
	bin, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("iperf3 (3.12) is not installed: apt-get install iperf3")
	}
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "-s", "-B", "127.0.0.1", "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	var out, errb bytes.Buffer
	for try := 0; ; try++ {
		out.Reset()
		errb.Reset()
		code := run(ctx, []string{"client", "127.0.0.1", "-p", port, "-t", "5"}, &out, &errb)
		if code == exitFailure && strings.Contains(errb.String(), "refused") && try < 50 {
			time.Sleep(20 * time.Millisecond) // iperf3 -s is still starting
			continue
		}
		if code != exitFailure {
			t.Fatalf("exit %d, want %d:\n%s%s", code, exitFailure, out.String(), errb.String())
		}
		break
	}
	if !strings.Contains(out.String(), "WARNING: the peer reset the connection") || !strings.Contains(out.String(), "use --dialect iperf3") {
		t.Errorf("no --dialect iperf3 hint:\n%s%s", out.String(), errb.String())
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
