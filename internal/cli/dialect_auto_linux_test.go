package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// Issue 22 point 6: off port 5201, with no --dialect, the client, matrix
// and sweep probe the peer and choose its dialect; these tests run them
// against the real iperf3 (3.x) and iperf (2.1.8) servers on loopback.

// realPeer is a real iperf or iperf3 server started for one test.
type realPeer struct {
	pid int
	out *loopback.Buffer
}

// startRealPeer runs bin with args plus -B 127.0.0.1 -p port until the
// test ends, and waits until it listens on port (proto "tcp" or "udp").
func startRealPeer(t *testing.T, bin, proto string, port int, args ...string) *realPeer {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err != nil {
		t.Skipf("%s is not installed: this interop test needs it (CI installs it with apt-get)", bin)
	}
	p := &realPeer{out: &loopback.Buffer{}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, path, append(args, "-B", "127.0.0.1", "-p", strconv.Itoa(port))...)
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = p.out, p.out, time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", bin, err)
	}
	p.pid = cmd.Process.Pid
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("%s %s output:\n%s", bin, proto, p.out.String())
		}
	})
	state := "0A" // TCP LISTEN
	if proto == "udp" {
		state = "07" // a bound UDP socket
	}
	want := fmt.Sprintf(":%04X 00000000:0000 %s", port, state)
	// Generous: a peer started on a loaded machine can take seconds to
	// listen; the wait ends as soon as it does.
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", p.pid, proto))
		if err == nil && strings.Contains(string(b), want) {
			return p
		}
		if time.Now().After(end) {
			t.Fatalf("%s does not listen on %s port %d after 30 s:\n%s", bin, proto, port, p.out.String())
		}
	}
}

// runAutoMatrix runs `matrix 127.0.0.1 -p PORT` with no --dialect (JSON)
// and returns the document and stderr.
func runAutoMatrix(t *testing.T, port int) (*result.Matrix, string) {
	t.Helper()
	code, out, errText := cliRun("matrix", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1", "-b", "10M", "--json", "--no-save")
	var m result.Matrix
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("exit %d, no matrix document (%v):\n%s\n%s", code, err, out, errText)
	}
	if code != exitOK {
		t.Errorf("exit %d: %s", code, errText)
	}
	return &m, errText
}

// checkAutoMatrix checks that the matrix chose dialect by probing and that
// its four cells are ok.
func checkAutoMatrix(t *testing.T, m *result.Matrix, dialect string) {
	t.Helper()
	if m.Dialect != dialect || m.DialectChosenBy != probe.ChosenByProbe {
		t.Errorf("dialect %q chosen by %q (%s), want %s chosen by probe", m.Dialect, m.DialectChosenBy, m.DialectReason, dialect)
	}
	if len(m.Cells) != 4 {
		t.Fatalf("%d cells, want 4", len(m.Cells))
	}
	for _, c := range m.Cells {
		if c.Status != matrix.StatusOK || c.BitsPerSecond == nil || *c.BitsPerSecond <= 0 {
			t.Errorf("cell %s: %s %q, want ok with a figure", c.Name(), c.Status, c.Reason)
		}
	}
}

// TestMatrixAutoDialectIperf3: a matrix against `iperf3 -s` on a port other
// than 5201, with no --dialect, probes it, runs in iperf3 and fills all four
// cells; a client started the moment the matrix ends, with no retry of the
// test's own, then finds the server between two tests and still probes it
// as iperf3 and runs.
func TestMatrixAutoDialectIperf3(t *testing.T) {
	port := loopback.FreePort(t)
	peer := startRealPeer(t, "iperf3", "tcp", port, "-s")
	m, _ := runAutoMatrix(t, port)
	checkAutoMatrix(t, m, "iperf3")
	if !strings.Contains(m.DialectReason, "iperf3 server") {
		t.Errorf("dialect_reason %q: want it to say the peer answered as an iperf3 server", m.DialectReason)
	}
	code, out, errText := cliRun("client", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "0.5", "--no-save")
	if code != exitOK || !strings.Contains(errText, "dialect iperf3 (chosen by probing the peer): the peer answered as an iperf3 server") {
		t.Errorf("client after the matrix: exit %d\n%s\n%s", code, out, errText)
	}
	// The probes' 1 KiB tests ended the way a real client ends one.
	if strings.Contains(peer.out.String(), "error") {
		t.Errorf("iperf3 logged an error:\n%s", peer.out.String())
	}
}

// TestMatrixAutoDialectIperf2: the same against iperf 2.1.8 (`iperf -s`
// and `iperf -s -u` on one port): the probe sees its CLIENTHDRACK and the
// matrix runs in iperf2.
func TestMatrixAutoDialectIperf2(t *testing.T) {
	port := loopback.FreePort(t)
	startRealPeer(t, "iperf", "tcp", port, "-s")
	startRealPeer(t, "iperf", "udp", port, "-s", "-u", "-w", "2M")
	m, errText := runAutoMatrix(t, port)
	checkAutoMatrix(t, m, "iperf2")
	if !strings.Contains(m.DialectReason, "iperf 2.1.8") {
		t.Errorf("dialect_reason %q: want the version the peer acked with", m.DialectReason)
	}
	if strings.Contains(errText, "dialect iperf2 (") {
		t.Errorf("JSON output also printed the choice on stderr: %s", errText)
	}
}

// TestClientAutoDialect: the client alone detects both servers (text: the
// choice and why on stderr; JSON: dialect_chosen_by), falls back to iperf2
// when the probe cannot tell (a UDP-only server refuses TCP), and leaves an
// explicit --dialect and port 5201 alone.
func TestClientAutoDialect(t *testing.T) {
	i3 := loopback.FreePort(t)
	startRealPeer(t, "iperf3", "tcp", i3, "-s")
	code, out, errText := cliRun("client", "127.0.0.1", "-p", strconv.Itoa(i3), "-t", "0.5", "--no-save")
	if code != exitOK || !strings.Contains(errText, "wirebench: dialect iperf3 (chosen by probing the peer): the peer answered as an iperf3 server") ||
		!strings.Contains(out, "receiver") {
		t.Errorf("iperf3 text: exit %d\n%s\n%s", code, out, errText)
	}
	i2 := loopback.FreePort(t)
	startRealPeer(t, "iperf", "tcp", i2, "-s")
	r := clientJSON(t, "client", "127.0.0.1", "-p", strconv.Itoa(i2), "-t", "0.5", "--json", "--no-save")
	if r.Test.Dialect != "iperf2" || r.Test.DialectChosenBy != probe.ChosenByProbe || r.Error != "" {
		t.Errorf("iperf 2 JSON: dialect %q by %q (%s), error %q", r.Test.Dialect, r.Test.DialectChosenBy, r.Test.DialectReason, r.Error)
	}
	udpOnly := loopback.FreePort(t)
	startRealPeer(t, "iperf", "udp", udpOnly, "-s", "-u")
	r = clientJSON(t, "client", "127.0.0.1", "-p", strconv.Itoa(udpOnly), "-u", "-t", "0.5", "--json", "--no-save")
	if r.Test.Dialect != "iperf2" || r.Test.DialectChosenBy != probe.ChosenByFallback || !strings.Contains(r.Test.DialectReason, "TCP was refused") {
		t.Errorf("UDP-only iperf 2: dialect %q by %q (%s), want the iperf2 fallback saying TCP was refused",
			r.Test.Dialect, r.Test.DialectChosenBy, r.Test.DialectReason)
	}
	r = clientJSON(t, "client", "127.0.0.1", "-p", strconv.Itoa(i2), "-t", "0.5", "--dialect", "iperf2", "--json", "--no-save")
	if r.Test.DialectChosenBy != probe.ChosenByFlag || r.Test.DialectReason != "" {
		t.Errorf("explicit --dialect: chosen by %q (%s), want flag and no probe", r.Test.DialectChosenBy, r.Test.DialectReason)
	}
}

// clientJSON runs a client with --json and returns its document.
func clientJSON(t *testing.T, args ...string) *result.Result {
	t.Helper()
	code, out, errText := cliRun(args...)
	var r result.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: exit %d, no JSON (%v):\n%s\n%s", args, code, err, out, errText)
	}
	return &r
}
