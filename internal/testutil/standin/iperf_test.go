package standin

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// These tests run the stand-ins against the real iperf 2.1.8 binary and
// assert the cross-version behaviour that docs/wire-protocols.md §1.5/§1.6
// documents.

type iperfProc struct {
	out  *loopback.Buffer
	done chan struct{}
}

// startIperf runs iperf with args under a 30 s timeout; it is killed when
// the test ends.
func startIperf(t *testing.T, args ...string) *iperfProc {
	t.Helper()
	path, err := exec.LookPath("iperf")
	if err != nil {
		t.Skip("iperf (2.1.8) is not installed; CI installs it with apt-get install iperf")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, path, args...)
	p := &iperfProc{out: &loopback.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start iperf: %v", err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cancel()
		<-p.done
		if t.Failed() {
			t.Logf("iperf %s output:\n%s", strings.Join(args, " "), p.out.String())
		}
	})
	return p
}

// waitFor polls the output for s for up to d.
func (p *iperfProc) waitFor(s string, d time.Duration) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if strings.Contains(p.out.String(), s) {
			return true
		}
		select {
		case <-p.done:
			return strings.Contains(p.out.String(), s)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

func startIperfUDPServer(t *testing.T) string {
	t.Helper()
	port := strconv.Itoa(loopback.FreePort(t))
	p := startIperf(t, "-s", "-u", "-B", "127.0.0.1", "-p", port)
	if !p.waitFor("Server listening", 5*time.Second) {
		t.Fatalf("iperf server did not start:\n%s", p.out.String())
	}
	t.Cleanup(func() {})
	return "127.0.0.1:" + port
}

// TestZperfNewClientToIperf218: a 16-byte zperf client gets a 128-byte
// report at offset 16 with flags 88000000 and Total = |FIN| = n+1 (§1.5,
// §1.6); zperf reads only 56 bytes of it and decodes it at 16.
func TestZperfNewClientToIperf218(t *testing.T) {
	port := strconv.Itoa(loopback.FreePort(t))
	p := startIperf(t, "-s", "-u", "-B", "127.0.0.1", "-p", port)
	if !p.waitFor("Server listening", 5*time.Second) {
		t.Fatal("iperf server did not start")
	}
	ctx := testCtx(t, 20*time.Second)
	cl, err := ZperfNewUDPClient(ctx, "127.0.0.1:"+port, UDPClientOptions{Count: 40, Length: 200, RateBps: 2e6, UnixTimestamps: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Replies) == 0 || len(cl.Replies[0]) != 128 || len(cl.ReportBytes) != 56 {
		t.Fatalf("replies %d (first %d bytes), zperf read %d; want a 128-byte reply read as 56", len(cl.Replies), lenFirst(cl.Replies), len(cl.ReportBytes))
	}
	r := cl.Report
	if r.Flags != 0x88000000 || r.Datagrams != 41 || r.ErrorCnt != 0 || r.OutOrderCnt != 0 || r.TotalLen() != 41*200 {
		t.Errorf("report %+v: want flags 88000000, 41 datagrams, 0 lost, %d bytes", *r, 41*200)
	}
	if !p.waitFor("0/41 (0%)", 5*time.Second) {
		t.Errorf("iperf server did not print 0/41")
	}
}

// TestLegacy205ClientToIperf218: the 2.1.8 server does not count id 0,
// reports Total = n, and puts its report at 16, so the 2.0.5 client finds
// no VERSION1 at 12 and prints no report (§1.5, §1.6, §6 case 3a).
func TestLegacy205ClientToIperf218(t *testing.T) {
	port := strconv.Itoa(loopback.FreePort(t))
	p := startIperf(t, "-s", "-u", "-B", "127.0.0.1", "-p", port)
	if !p.waitFor("Server listening", 5*time.Second) {
		t.Fatal("iperf server did not start")
	}
	ctx := testCtx(t, 20*time.Second)
	cl, err := Legacy205UDPClient(ctx, "127.0.0.1:"+port, UDPClientOptions{Count: 40, Length: 200, RateBps: 2e6})
	if err != nil {
		t.Fatal(err)
	}
	if cl.ReportAccepted || len(cl.Replies) != 1 || len(cl.Replies[0]) != 128 {
		t.Fatalf("accepted=%v (%s), %d replies of %d bytes; want one 128-byte reply, rejected", cl.ReportAccepted, cl.ReportNote, len(cl.Replies), lenFirst(cl.Replies))
	}
	at16, err := ParseServerReport(cl.Replies[0], 16)
	if err != nil {
		t.Fatal(err)
	}
	if at16.Flags != 0x88000000 || at16.Datagrams != 40 || at16.ErrorCnt != 0 || at16.TotalLen() != 40*200 {
		t.Errorf("report at 16 %+v: want flags 88000000, Total 40, 0 lost, %d bytes (id 0 not counted)", at16, 40*200)
	}
	if !p.waitFor("0/40 (0%)", 5*time.Second) {
		t.Errorf("iperf server did not print 0/40")
	}
}

// TestIperf218ClientToZperfNewServer: a 2.1.8 client against the new zperf
// server prints the zperf report (Total = |FIN|, 0 lost) and no warning.
func TestIperf218ClientToZperfNewServer(t *testing.T) {
	if _, err := exec.LookPath("iperf"); err != nil {
		t.Skip("iperf (2.1.8) is not installed; CI installs it with apt-get install iperf")
	}
	ctx := testCtx(t, 20*time.Second)
	srv, err := ZperfNewUDPServer(ctx, "127.0.0.1:0", UDPServerOptions{Linger: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(srv.Addr().(*net.UDPAddr).Port)
	p := startIperf(t, "-c", "127.0.0.1", "-u", "-p", port, "-t", "0.5", "-b", "1M", "-l", "200")
	sr, err := srv.Wait()
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	out := p.out.String()
	if !sr.Completed || sr.Total != -sr.FINID || sr.Counted != int64(sr.Total)-1 || sr.Bytes != uint64(sr.Counted)*200 || sr.Lost != 0 {
		t.Fatalf("server: completed=%v total=%d FIN=%d counted=%d bytes=%d lost=%d", sr.Completed, sr.Total, sr.FINID, sr.Counted, sr.Bytes, sr.Lost)
	}
	if !strings.Contains(out, "Server Report:") || !strings.Contains(out, fmt.Sprintf(" 0/%d (0%%)", sr.Total)) {
		t.Errorf("iperf client did not print the server report with 0/%d", sr.Total)
	}
	if strings.Contains(out, "did not receive ack") {
		t.Errorf("iperf client warned about the ack")
	}
	t.Logf("iperf client output:\n%s", out)
}

func lenFirst(b [][]byte) int {
	if len(b) == 0 {
		return 0
	}
	return len(b[0])
}
