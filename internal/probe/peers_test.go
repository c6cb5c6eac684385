package probe

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// Helpers for the interop tests: free loopback ports and real iperf/iperf3
// servers started, watched and killed by the test.

// inUse reports whether a TCP (or UDP) listener holds the loopback port.
func inUse(network string, port int) bool {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if network == "udp" {
		pc, err := net.ListenPacket("udp", addr)
		if err == nil {
			_ = pc.Close()
		}
		return err != nil
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		_ = ln.Close()
	}
	return err != nil
}

// startPeer runs bin with args until the test ends and waits (≤ 3 s) until
// it holds port for network. It skips the test when bin is not installed.
func startPeer(t *testing.T, bin string, network string, port int, args ...string) *loopback.Buffer {
	t.Helper()
	return startPeerProc(t, bin, network, port, args...).out
}

// peerProc is a started peer: its output, and whether it has exited.
type peerProc struct {
	out  *loopback.Buffer
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done
}

// exited says whether the peer has ended (crashed: a server never ends by
// itself) and how.
func (p *peerProc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// startPeerProc starts a real peer as startPeer does and keeps its
// process's fate.
func startPeerProc(t *testing.T, bin string, network string, port int, args ...string) *peerProc {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err != nil {
		t.Skipf("%s not installed (%v): this interop test needs the real binary", bin, err)
	}
	p := &peerProc{out: &loopback.Buffer{}, done: make(chan struct{})}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	for end := time.Now().Add(3 * time.Second); !inUse(network, port); {
		if time.Now().After(end) {
			t.Fatalf("%s %v did not listen on %s port %d; output:\n%s", bin, args, network, port, p.out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

// runProbe probes 127.0.0.1:port with a test deadline.
func runProbe(t *testing.T, port int) *result.Probe {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	r, err := Run(ctx, Config{Host: "127.0.0.1", Port: port})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var text bytes.Buffer
	_ = report.WriteProbe(&text, r)
	t.Logf("probe of port %d (%v):\n%s", port, time.Since(start).Round(time.Millisecond), text.String())
	return r
}

// wantDialects checks r.Dialects exactly.
func wantDialects(t *testing.T, r *result.Probe, want ...string) {
	t.Helper()
	if len(r.Dialects) != len(want) {
		t.Fatalf("dialects %v, want %v", r.Dialects, want)
	}
	for i := range want {
		if r.Dialects[i] != want[i] {
			t.Fatalf("dialects %v, want %v", r.Dialects, want)
		}
	}
}
