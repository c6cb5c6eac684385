package iperf2

import (
	"context"
	"encoding/binary"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/resultcheck"

	"go.uber.org/goleak"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// Regression tests for the two crashes of issue 15: bytes from the wire
// that made the server panic.

// TestCrashReverseAndFullDuplexTCP: a 2.1 header asking for both reverse
// and full duplex left handleTCP without a receive flow and indexed it
// (index out of range). It now runs full duplex, says so in a warning, and
// counts both directions exactly.
func TestCrashReverseAndFullDuplexTCP(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	h := iperf2.NewClientHeader(false, 1, 5001)
	h.Flags |= iperf2.FlagVersion2
	h.UpperFlags |= iperf2.UpperReverse | iperf2.UpperFullDuplex
	h.Amount = iperf2.AmountForDuration(300 * time.Millisecond)
	data := append(h.AppendTo(nil), make([]byte, 50_000)...)
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	send(t, c, data)
	// Our side ends at once; the server sends for its 300 ms, then
	// closes: everything it sent is read to EOF.
	c.(*net.TCPConn).CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(guard))
	got, _ := io.Copy(io.Discard, c)
	r := ts.resultFrom(c.LocalAddr().String())
	if r.Test.Mode != "full-duplex" || r.Test.Direction != result.DirBidir {
		t.Errorf("mode %q direction %q, want full-duplex bidir", r.Test.Mode, r.Test.Direction)
	}
	if !resultcheck.HasWarning(r, "both reverse") {
		t.Errorf("no warning about the two modes: %q", r.Warnings)
	}
	if rv := receiverOf(t, r); rv.Bytes != int64(len(data)) {
		t.Errorf("the server counted %d bytes received, the client sent %d", rv.Bytes, len(data))
	}
	if r.Sender == nil || r.Sender.Bytes != got || got == 0 {
		t.Errorf("the server counted %+v sent, the client read %d bytes", r.Sender, got)
	}
	normalTCPTest(t, ts)
	done(ts)
}

// TestCrashShortHeaderLength: the LEN field of a header's flags announces
// 0..255 bytes; 1..3 made readTCPHeader allocate a negative length
// (makeslice: len out of range). Every length below the 24-byte v1 header
// is now refused before anything is allocated, with a log line, and the
// stream is counted as data, every byte of it.
func TestCrashShortHeaderLength(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	for _, n := range []uint32{1, 2, 3, 4, 23} {
		flags := iperf2.FlagExtend | iperf2.FlagLenBit | n<<1
		data := binary.BigEndian.AppendUint32(nil, flags)
		data = append(data, make([]byte, 10_000)...)
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		send(t, c, data)
		c.(*net.TCPConn).CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(guard))
		back, _ := io.Copy(io.Discard, c)
		c.Close()
		line := ts.waitLog(c.LocalAddr().String())
		if !strings.Contains(line, "-byte test header, outside") {
			t.Errorf("length %d: log %q", n, line)
		}
		r := ts.resultFrom(c.LocalAddr().String())
		if rv := receiverOf(t, r); rv.Bytes != int64(len(data)) || back != 0 {
			t.Errorf("length %d: %d bytes sent, the server counted %d and sent %d back", n, len(data), rv.Bytes, back)
		}
	}
	normalTCPTest(t, ts)
	done(ts)
}

// TestPanicEndsOnlyItsTest injects a panic into one TCP test, one UDP test
// and one iperf3 test while a fourth test runs: each of the three ends with
// an error in its result and the panic, stack included, in the log; the
// fourth completes with exact counts, and the server goes on taking tests.
func TestPanicEndsOnlyItsTest(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	// The healthy test is silent between its two sends while the others
	// run: it must not end on the idle timeout, however busy the machine
	// (with robustConfig's 500 ms it did under load, and the test waited
	// for a result that had already come).
	cfg := robustConfig()
	cfg.IdleTimeout = guard
	ts := startI3Server(t, cfg, Iperf3Config{})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ts.port))
	var victims sync.Map // local ports whose tests panic
	panicky := func(point string, peer netip.AddrPort) {
		if _, ok := victims.Load(peer.Port()); ok || point == "iperf3-test" {
			panic("injected for " + point)
		}
	}
	session.SetTestHook(panicky)
	defer session.SetTestHook(nil)

	// The healthy test starts first and is still running when the others
	// panic.
	good, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	hdr := header60(1, 0)
	send(t, good, append(hdr, make([]byte, 100_000)...))

	tcpVictim, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tcpVictim.Close()
	victims.Store(uint16(tcpVictim.LocalAddr().(*net.TCPAddr).Port), true)
	send(t, tcpVictim, append(header60(1, 0), make([]byte, 1000)...))

	raddr, _ := net.ResolveUDPAddr("udp", addr)
	udpVictim, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		t.Fatal(err)
	}
	defer udpVictim.Close()
	victims.Store(uint16(udpVictim.LocalAddr().(*net.UDPAddr).Port), true)
	send(t, udpVictim, modernDatagram(1, 200, ts.port))

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	out, err := exec.CommandContext(ctx, iperf3Bin(t), "-c", "127.0.0.1", "-p", strconv.Itoa(ts.port), "-t", "1").CombinedOutput()
	if err == nil {
		t.Errorf("the iperf3 test whose server side panicked succeeded:\n%s", out)
	}

	rs := ts.waitResults(3)
	for _, peer := range []string{tcpVictim.LocalAddr().String(), udpVictim.LocalAddr().String(), ""} {
		found := false
		for _, r := range rs {
			if (r.Test.Peer == peer || peer == "" && r.Test.Dialect == session.DialectIperf3) && strings.Contains(r.Error, "internal error (panic: injected") {
				found = true
			}
		}
		if !found {
			t.Errorf("no result with the panic as its error for %q among %d results", peer, len(rs))
		}
	}
	logs := strings.Join(ts.Logs(), "\n")
	for _, point := range []string{"tcp-test", "udp-datagram", "iperf3-test"} {
		if !strings.Contains(logs, "panic: injected for "+point) {
			t.Errorf("the log does not show the panic at %s:\n%s", point, logs)
		}
	}
	if !strings.Contains(logs, "harden_test.go") || !strings.Contains(logs, "goroutine ") {
		t.Errorf("the log carries no stack:\n%s", logs)
	}

	// The healthy test carries on and counts every byte.
	send(t, good, make([]byte, 50_000))
	good.(*net.TCPConn).CloseWrite()
	_ = good.SetReadDeadline(time.Now().Add(guard))
	_, _ = io.Copy(io.Discard, good)
	var gr *result.Result
	for n := len(rs); gr == nil; n++ { // the results so far first, then one more at a time
		for _, r := range ts.waitResults(n) {
			if r.Test.Peer == good.LocalAddr().String() {
				gr = r
			}
		}
	}
	if rv := receiverOf(t, gr); rv.Bytes != int64(len(hdr)+150_000) || gr.Error != "" {
		t.Errorf("the healthy test counted %d bytes (want %d), error %q", rv.Bytes, len(hdr)+150_000, gr.Error)
	}
	session.SetTestHook(nil)
	if rep, _ := runIperf3Client(t, ts.port, "-t", "1", "-J"); sumReceivedBytes(rep) == 0 {
		t.Errorf("an iperf3 test after the panics received nothing")
	}
	ts.stop()
	goleak.VerifyNone(t, ignore)
}

// TestUDPReusedPortAfterIdleEnd: a source whose test ended on the idle
// timeout (no FIN) and then sends a new test from the same port (a reused
// ephemeral port, seen in the soak test) gets a new test with its report,
// not its datagrams swallowed as late parts of the old one.
func TestUDPReusedPortAfterIdleEnd(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	c := udpSock(t, ts)
	send(t, c, modernDatagram(1, 200, 5001))
	send(t, c, modernDatagram(2, 200, 5001))
	first := ts.waitResults(1)[0]
	if rv := receiverOf(t, first); rv.Packets != 2 || !resultcheck.HasWarning(first, "never sent a FIN") {
		t.Fatalf("first test: %d packets, warnings %q", rv.Packets, first.Warnings)
	}
	for id := int64(1); id <= 5; id++ {
		send(t, c, modernDatagram(id, 200, 5001))
	}
	send(t, c, modernDatagram(-6, 200, 5001))
	// Six datagrams: the FIN carries data and counts, as with iperf.
	if rep := readReport(t, c); rep.Datagrams != 6 || rep.Errors != 0 {
		t.Errorf("the new test's report: %+v", rep)
	}
	second := ts.waitResults(2)[1]
	if rv := receiverOf(t, second); rv.Packets != 6 || rv.Lost != 0 {
		t.Errorf("second test: %+v", rv)
	}
	done(ts)
}

// TestReportCountsNeverNegative: a peer's report with counts of 2^63 or
// more (a garbage or hostile server) gives saturated counts and a flag for
// a warning, never negative ones.
func TestReportCountsNeverNegative(t *testing.T) {
	rep := &iperf2.ServerReport{TotalBytes: 1 << 63, Errors: 1<<64 - 1, Datagrams: 10, Stop: time.Second}
	rr, implausible := udpstream.ReportReceiver(rep)
	if !implausible || rr.Bytes < 0 || rr.Lost < 0 || rr.Total != 10 || rr.Packets < 0 {
		t.Errorf("receiver %+v, implausible %v", rr, implausible)
	}
	if _, implausible := udpstream.ReportReceiver(&iperf2.ServerReport{TotalBytes: 1000, Datagrams: 10}); implausible {
		t.Error("a plain report was called implausible")
	}
}
