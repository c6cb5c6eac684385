package iperf2

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/resultcheck"

	"go.uber.org/goleak"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	"github.com/wirebench/wirebench/internal/testutil/standin"
	"github.com/wirebench/wirebench/internal/udpio"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// Garbage on the server's ports (issue 2, "Must show"): random bytes,
// truncated headers, floods of FINs, too many sources, TCP connections that
// never send or break off. Each must give a log line, never a panic, a
// stuck test or unbounded memory; a normal test afterwards completes with
// exact counts, and no goroutine outlives Serve.

// robustConfig is a server tuned so garbage tests end quickly: short idle
// and header timeouts, and nothing a garbage header asks us to send runs
// for more than a second.
func robustConfig() session.ServerConfig {
	return session.ServerConfig{IdleTimeout: 500 * time.Millisecond, HeaderTimeout: 300 * time.Millisecond, MaxDuration: time.Second}
}

// leakCheck records the goroutines running now; the returned func stops
// the server and fails the test if any goroutine started since outlives it.
func leakCheck(t *testing.T) func(ts *testServer) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	return func(ts *testServer) {
		t.Helper()
		ts.stop()
		goleak.VerifyNone(t, ignore)
	}
}

// normalUDPTest runs a zperf-new stand-in test against ts and checks its
// counts are exact: the server is not stuck.
func normalUDPTest(t *testing.T, ts *testServer) {
	t.Helper()
	c, err := standin.ZperfNewUDPClient(deadlineCtx(t), ts.addr, standin.UDPClientOptions{Count: 100, RateBps: standinRate,
		Impair: standin.Impairment{Drop: []int64{7}, Swap: [][2]int64{{20, 21}}, Repeat: []int64{30}}})
	if err != nil {
		t.Fatal(err)
	}
	r := ts.resultFrom(c.Local.String())
	checkUDPServerCounts(t, r, c, session.DialectRaw)
	checkStandinReport(t, c, r.Receiver)
}

// normalTCPTest runs a zperf TCP stand-in against ts and checks the byte
// count.
func normalTCPTest(t *testing.T, ts *testServer) {
	t.Helper()
	c, err := standin.ZperfTCPClient(deadlineCtx(t), ts.addr, standin.TCPClientOptions{Bytes: 200_000})
	if err != nil {
		t.Fatal(err)
	}
	r := ts.resultFrom(c.Local.String())
	if rv := receiverOf(t, r); rv.Bytes != 200_000 || c.BytesSent != 200_000 {
		t.Errorf("normal TCP test after garbage: server counted %d, client sent %d", rv.Bytes, c.BytesSent)
	}
}

// udpSock is a raw loopback UDP socket connected to the server.
func udpSock(t *testing.T, ts *testServer) *net.UDPConn {
	t.Helper()
	raddr, err := net.ResolveUDPAddr("udp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func send(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// modernDatagram returns a 2.1-style datagram (16-byte header with id and
// the 60-byte client header at 16), length bytes long (at least 76).
func modernDatagram(id int64, length int, port int) []byte {
	h := iperf2.NewClientHeader(true, 1, int32(port))
	h.Amount = iperf2.AmountForDuration(time.Second)
	b := make([]byte, 16, max(length, 76))
	b = h.AppendUDPTo(b)
	b = b[:cap(b)]
	iperf2.PutDatagram(b, iperf2.LayoutModern, id, time.Now())
	return b
}

func TestGarbageUDPRandom(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	rng := rand.New(rand.NewPCG(2, 42))
	socks := []*net.UDPConn{udpSock(t, ts), udpSock(t, ts), udpSock(t, ts)}
	for i := 0; i < 300; i++ {
		b := make([]byte, rng.IntN(1500))
		for k := range b {
			b[k] = byte(rng.Uint32())
		}
		send(t, socks[rng.IntN(len(socks))], b)
	}
	ts.waitLog("too short")
	// Whatever the garbage started ends on its own: a FIN among the random
	// ids, the idle timeout, or MaxDuration for what it asked us to send.
	ts.waitFor("every source's test to end", func(rs []*result.Result, _ []string) bool {
		ended := map[string]bool{}
		for _, r := range rs {
			ended[r.Test.Peer] = true
		}
		for _, s := range socks {
			if !ended[s.LocalAddr().String()] {
				return false
			}
		}
		return true
	})
	// A source may have started more than one test, and what the server
	// sends for one (-R, at any rate it asks, for up to MaxDuration)
	// competes with the normal test for this host's CPU.
	ts.waitIdle()
	normalUDPTest(t, ts)
	done(ts)
}

func TestGarbageTCPRandom(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	rng := rand.New(rand.NewPCG(3, 7))
	const conns = 30
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, rng.IntN(4000))
		for k := range b {
			b[k] = byte(rng.Uint32())
		}
		if i%3 == 0 && len(b) >= 4 {
			// A first word that announces a header (EXTEND), random
			// after it.
			binary.BigEndian.PutUint32(b, iperf2.FlagExtend|rng.Uint32()&0x00FFFFFF)
		}
		_, _ = c.Write(b)
		c.Close()
	}
	ts.waitResults(conns)
	normalTCPTest(t, ts)
	done(ts)
}

func TestGarbageShortDatagrams(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	c := udpSock(t, ts)
	for n := 0; n < 12; n++ {
		for k := 0; k < 20; k++ {
			send(t, c, make([]byte, n))
		}
	}
	ts.waitLog("too short")
	normalUDPTest(t, ts)
	if n := ts.resultCount(); n != 1 {
		t.Errorf("datagrams of 0-11 bytes started %d tests", n-1)
	}
	done(ts)
}

func TestGarbageTruncatedHeaders(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	full := modernDatagram(1, 76, 5001)
	var socks []*net.UDPConn
	for n := 12; n <= 76; n++ {
		c := udpSock(t, ts)
		socks = append(socks, c)
		send(t, c, full[:n])
	}
	// A header announced at 16 but cut short is a log line; the datagram
	// still counts, as one datagram of a header-less test.
	ts.waitLog("header")
	for i, c := range socks {
		n := 12 + i
		r := ts.resultFrom(c.LocalAddr().String())
		rv := receiverOf(t, r)
		if n < 16 {
			// Shorter than the 16-byte header its layout (modern, the
			// default below 20 bytes) needs: not counted, but said.
			if rv.Packets != 0 || !resultcheck.HasWarning(r, "too short to carry a sequence number") {
				t.Errorf("%d-byte datagram: %d packets, warnings %q", n, rv.Packets, r.Warnings)
			}
			continue
		}
		if rv.Packets != 1 || rv.Bytes != int64(n) || rv.Total != 1 || rv.Lost != 0 {
			t.Errorf("%d-byte datagram: packets/bytes/total/lost %d/%d/%d/%d, want 1/%d/1/0", n, rv.Packets, rv.Bytes, rv.Total, rv.Lost, n)
		}
		wantDialect := session.DialectRaw
		if n == 76 {
			wantDialect = session.DialectIperf2
		}
		if r.Test.Dialect != wantDialect {
			t.Errorf("%d-byte datagram: dialect %s, want %s", n, r.Test.Dialect, wantDialect)
		}
	}
	normalUDPTest(t, ts)
	done(ts)
}

func TestGarbageFINFlood(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())

	// FINs for tests that do not exist: ignored and logged, no test.
	stray := udpSock(t, ts)
	for k := 0; k < 300; k++ {
		send(t, stray, modernDatagram(int64(-1-k), 100, 5001))
	}
	ts.waitLog("has no test here")

	// FINs for a finished test: the real report again, at most
	// udpstream.MaxReportResends times, and not to FINs that reached the socket
	// before the last report left (the client sent them before it could
	// have that report).
	c := udpSock(t, ts)
	for id := int64(1); id <= 10; id++ {
		send(t, c, modernDatagram(id, 200, 5001))
	}
	send(t, c, modernDatagram(-11, 200, 5001))
	first := readReport(t, c)
	if first.Datagrams != 11 || first.Errors != 0 || first.TotalBytes != 11*200 {
		t.Fatalf("report %+v, want 11 datagrams, 0 lost, 2200 bytes", first)
	}
	buf := make([]byte, 2048)
	// readReplies counts the reports that come within wait of each other
	// (the first within wait), reading at most most of them.
	readReplies := func(wait time.Duration, most int) int {
		replies := 0
		for replies < most {
			_ = c.SetReadDeadline(time.Now().Add(wait))
			n, err := c.Read(buf)
			if err != nil {
				return replies
			}
			rep, layout, perr := iperf2.ParseServerReport(buf[:n])
			if perr != nil || layout != iperf2.LayoutModern || !sameReport(rep, first) {
				t.Errorf("late FIN answered with something else than the report: %v % x", perr, buf[:min(n, 32)])
			}
			replies++
		}
		return replies
	}
	id := int64(-12)
	const flood = 150
	for range flood {
		send(t, c, modernDatagram(id, 200, 5001))
		id--
	}
	answered := readReplies(500*time.Millisecond, flood+1)
	if answered < 1 || answered > flood {
		t.Fatalf("%d late FINs sent back to back got %d replies, want 1 to %d", flood, answered, flood)
	}
	// One at a time, each after the last reply: each is answered, until
	// the report was re-sent udpstream.MaxReportResends times.
	for answered < udpstream.MaxReportResends {
		send(t, c, modernDatagram(id, 200, 5001))
		id--
		if readReplies(2*time.Second, 1) != 1 {
			t.Fatalf("a late FIN sent after the report's re-send %d was not answered", answered)
		}
		answered++
	}
	send(t, c, modernDatagram(id, 200, 5001))
	if n := readReplies(300*time.Millisecond, 1); n != 0 {
		t.Errorf("%d replies after the report was re-sent udpstream.MaxReportResends = %d times, want none", n, udpstream.MaxReportResends)
	}
	ts.waitLog("late FIN")
	r := ts.resultFrom(c.LocalAddr().String())
	if rv := receiverOf(t, r); rv.Packets != 11 || rv.Total != 11 {
		t.Errorf("finished test's counts changed by the flood: %+v", rv)
	}
	if n := ts.resultCount(); n != 1 {
		t.Errorf("%d results, want 1 (stray FINs start no test)", n)
	}
	normalUDPTest(t, ts)
	done(ts)
}

// readReport reads one reply and parses it as a server report.
func readReport(t *testing.T, c *net.UDPConn) iperf2.ServerReport {
	t.Helper()
	buf := make([]byte, 2048)
	_ = c.SetReadDeadline(time.Now().Add(guard))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no report: %v", err)
	}
	rep, _, err := iperf2.ParseServerReport(buf[:n])
	if err != nil {
		t.Fatalf("reply is no report: %v", err)
	}
	return rep
}

func TestGarbageTooManySources(t *testing.T) {
	done := leakCheck(t)
	cfg := robustConfig()
	cfg.MaxTests = 8
	ts := startServer(t, cfg)
	const sources = 40
	for i := 0; i < sources; i++ {
		c := udpSock(t, ts)
		send(t, c, modernDatagram(1, 200, 5001))
		send(t, c, modernDatagram(2, 200, 5001))
	}
	ts.waitLog("tests are open")
	// The 8 accepted tests end on the idle timeout; the others never
	// started.
	rs := ts.waitResults(cfg.MaxTests)
	for _, r := range rs {
		if rv := receiverOf(t, r); rv.Packets != 2 || !resultcheck.HasWarning(r, "never sent a FIN") {
			t.Errorf("test %s: %d packets, warnings %q", r.Test.Peer, rv.Packets, r.Warnings)
		}
	}
	// The server is not held full by finished tests: a new one runs.
	normalUDPTest(t, ts)
	if n := ts.resultCount(); n != cfg.MaxTests+1 {
		t.Errorf("%d results, want %d: the refused sources must start no test", n, cfg.MaxTests+1)
	}
	done(ts)
}

func TestGarbageTCPSilent(t *testing.T) {
	done := leakCheck(t)
	ts := startServer(t, robustConfig())
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ts.waitLog("sent nothing")
	_ = c.SetReadDeadline(time.Now().Add(guard))
	if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("the server did not close the silent connection: %d, %v", n, err)
	}
	r := ts.resultFrom(c.LocalAddr().String())
	if rv := receiverOf(t, r); rv.Bytes != 0 || !resultcheck.HasWarning(r, "idle timeout") {
		t.Errorf("silent connection: %d bytes, warnings %q", rv.Bytes, r.Warnings)
	}
	normalTCPTest(t, ts)
	done(ts)
}

func TestGarbageTCPHeaders(t *testing.T) {
	hdr60 := func(flags uint32) []byte {
		h := iperf2.NewClientHeader(false, 1, 5001)
		h.Amount = iperf2.AmountForDuration(time.Second)
		b := h.AppendTo(nil)
		if flags != 0 {
			binary.BigEndian.PutUint32(b, flags)
		}
		return b
	}
	bounceback := make([]byte, 100)
	binary.BigEndian.PutUint32(bounceback, iperf2.FlagBounceback)
	binary.BigEndian.PutUint32(bounceback[4:], 100)
	cases := []struct {
		name string
		data []byte
		log  string
	}{
		{"partial-2.1-header", hdr60(0)[:10], "got 10"},
		{"partial-v1-header", hdr60(iperf2.FlagVersion1)[:20], "got 20"},
		{"flags-only", hdr60(0)[:4], "got 4"},
		{"bounceback", bounceback, "bounceback"},
		{"keycheck", append(hdr60(iperf2.FlagExtend|iperf2.FlagKeyCheck), make([]byte, 1000)...), "permit key"},
		{"keycheck-bare", append(binary.BigEndian.AppendUint32(nil, iperf2.FlagKeyCheck), make([]byte, 1000)...), "permit key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			done := leakCheck(t)
			ts := startServer(t, robustConfig())
			c, err := net.Dial("tcp", ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			send(t, c, tc.data)
			c.(*net.TCPConn).CloseWrite()
			_ = c.SetReadDeadline(time.Now().Add(guard))
			back, _ := io.Copy(io.Discard, c)
			c.Close()
			ts.waitLog(tc.log)
			r := ts.resultFrom(c.LocalAddr().String())
			if rv := receiverOf(t, r); rv.Bytes != int64(len(tc.data)) {
				t.Errorf("%d bytes sent, the server counted %d", len(tc.data), rv.Bytes)
			}
			if back > 28 {
				t.Errorf("the server sent %d bytes back", back)
			}
			normalTCPTest(t, ts)
			done(ts)
		})
	}
}

// fakeConn is a udpio.Conn without a socket: writes are counted, reads
// never return anything.
type fakeConn struct {
	mu      sync.Mutex // guards following fields
	writes  int
	maxSize int
}

func (f *fakeConn) ReadBatch([]udpio.Message) (int, error) { return 0, net.ErrClosed }
func (f *fakeConn) WriteBatch(msgs []udpio.Message) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range msgs {
		f.writes++
		f.maxSize = max(f.maxSize, len(m.Buf))
	}
	return len(msgs), nil
}
func (f *fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (f *fakeConn) LocalAddr() netip.AddrPort        { return netip.MustParseAddrPort("127.0.0.1:5001") }
func (f *fakeConn) RemoteAddr() netip.AddrPort       { return netip.AddrPort{} }
func (f *fakeConn) Drops() (uint64, bool)            { return 0, false }
func (f *fakeConn) Capabilities() udpio.Capabilities { return udpio.Capabilities{} }
func (f *fakeConn) Close() error                     { return nil }

// FuzzServerDatagram feeds arbitrary datagrams from one or two sources
// through the server's datagram handling (demultiplexing, layout and header
// detection, accounting, FIN and report, idle end), without sockets. The
// context is cancelled from the start, so whatever a datagram asks the
// server to send (reverse, connect-back) ends at once.
func FuzzServerDatagram(f *testing.F) {
	seeds := [][3][]byte{
		{modernDatagram(1, 100, 5001), modernDatagram(2, 100, 5001), modernDatagram(-3, 100, 5001)},
		{legacyDatagram(0), legacyDatagram(1), legacyDatagram(-2)},
		{make([]byte, 11), make([]byte, 12), make([]byte, 40)},
		{modernDatagram(-1, 76, 5001), modernDatagram(5, 76, 5001)[:50], nil},
		// A finished test's source starts another (source-port reuse).
		{legacyDatagram(0), legacyDatagram(-1), legacyDatagram(0)},
		{legacyDatagram(1), legacyDatagram(-2), modernDatagram(1, 100, 5001)},
	}
	rev := modernDatagram(1, 100, 5001)
	binary.BigEndian.PutUint32(rev[16:], binary.BigEndian.Uint32(rev[16:])|iperf2.FlagVersion2)
	binary.BigEndian.PutUint16(rev[16+24+8:], iperf2.UpperReverse)
	binary.BigEndian.PutUint32(rev[16+12:], 0x7fffffff) // BufLen
	seeds = append(seeds, [3][]byte{rev, nil, nil})
	dual := modernDatagram(1, 100, 5001)
	binary.BigEndian.PutUint32(dual[16:], binary.BigEndian.Uint32(dual[16:])|iperf2.FlagVersion1|iperf2.FlagRunNow)
	seeds = append(seeds, [3][]byte{dual, modernDatagram(-2, 100, 5001), nil})
	for i, s := range seeds {
		f.Add(s[0], s[1], s[2], uint8(i))
	}
	f.Fuzz(func(t *testing.T, d0, d1, d2 []byte, sources uint8) {
		var seq []fuzzDatagram
		for i, d := range [][]byte{d0, d1, d2} {
			if d != nil {
				seq = append(seq, fuzzDatagram{src: int(sources>>i) & 1, b: d, at: time.Duration(i) * time.Millisecond})
			}
		}
		runServerDatagrams(t, seq, false)
	})
}

// fuzzDatagram is one datagram of a fuzz sequence: from source number src,
// at time at from the start.
type fuzzDatagram struct {
	src int
	b   []byte
	at  time.Duration
}

// runServerDatagrams feeds seq through the server's datagram handling
// (demultiplexing, the other protocols when iperf3 is on, layout and header
// detection, accounting, FIN and report, the idle sweep as time passes),
// without sockets. The context is cancelled from the start, so whatever a
// datagram asks the server to send (reverse, connect-back) ends at once.
// Every test started must end in exactly one result, with sane counts.
func runServerDatagrams(t *testing.T, seq []fuzzDatagram, withIperf3 bool) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fc := &fakeConn{}
	// No per-source limits: the sources are one address's ports.
	cfg := session.ServerConfig{MaxTests: 2, MaxDuration: time.Second, MaxTestsPerSource: -1, NewTestsPerSecondPerSource: -1}
	cfg.OnLog = func(msg string) {
		if strings.Contains(msg, "internal error") {
			t.Errorf("a recovered panic: %s", msg)
		}
	}
	// Every test started must end in exactly one result: its own, or
	// the one of the -P group it joined (which lists it in Streams).
	var started int
	ended := map[int]int{}
	var mu sync.Mutex
	cfg.OnTestStart = func(int, *result.Result) { started++ }
	cfg.OnResult = func(id int, r *result.Result) {
		mu.Lock()
		defer mu.Unlock()
		if len(r.Streams) == 0 {
			ended[id]++
			return
		}
		for _, st := range r.Streams {
			ended[st.ID]++
		}
	}
	ss := session.NewTestServer(ctx, cfg, nil, fc, 5001)
	s := enable(ss)
	if withIperf3 {
		if _, err := enableIperf3(ctx, ss, Iperf3Config{}); err != nil {
			t.Fatal(err)
		}
	}
	tests := s.udpTests
	var all []*udpTest
	now := time.Now()
	last := now
	for _, d := range seq {
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(40000+d.src))
		at := now.Add(d.at)
		if at.Sub(last) >= session.SweepEvery {
			s.SweepUDP(ctx, at, true)
			last = at
		}
		buf := append([]byte(nil), d.b...)
		s.FeedDatagram(ctx, &udpio.Message{Buf: buf, N: len(buf), Addr: src, Time: at})
		if len(tests) > cfg.MaxTests {
			t.Fatalf("%d tests open, MaxTests %d", len(tests), cfg.MaxTests)
		}
		for _, tt := range tests {
			if !slices.Contains(all, tt) {
				all = append(all, tt)
			}
		}
	}
	s.SweepUDP(ctx, now.Add(time.Hour), true)
	for _, tt := range tests {
		if !tt.finished {
			s.endUDP(tt, "the server stopped during the test")
		}
	}
	s.WaitTests()
	mu.Lock()
	if len(ended) != started || started != len(all) {
		t.Errorf("%d tests started (%d seen), %d ended in a result: %v", started, len(all), len(ended), ended)
	}
	for id, n := range ended {
		if n != 1 {
			t.Errorf("test %d ended in %d results", id, n)
		}
	}
	mu.Unlock()
	for _, tt := range all {
		r := tt.res
		if rv := r.Receiver; rv != nil && (rv.Lost < 0 || rv.Packets < 0 || rv.Bytes < 0 || rv.OutOfOrder < 0 || dupsOf(rv) < -1) {
			t.Errorf("negative counts: %+v", rv)
		}
		if rep := tt.rx.Report(); rep != nil && len(rep) != iperf2.ReportLenModern && len(rep) != iperf2.ReportLenLegacy {
			// Longer only with the wirebench extension a wirebench
			// client asked for: whole, parseable, within its bound.
			sr, _, err := iperf2.ParseServerReport(rep)
			if len(rep) < iperf2.ReportLenModern || len(rep) > iperf2.MaxReportLenWithExt || err != nil || sr.WB == nil {
				t.Errorf("report of %d bytes (extension %v, %v)", len(rep), sr.WB != nil, err)
			}
		}
	}
	if fc.maxSize > 65507 {
		t.Errorf("the server sent a %d-byte datagram", fc.maxSize)
	}
}

// FuzzServerDatagrams feeds arbitrary sequences of datagrams from up to
// eight sources, with time passing between them (so tests end on the idle
// sweep and finished ones are forgotten), through the server's datagram
// handling with iperf3 enabled. The input is a list of records: a byte
// whose low 3 bits pick the source and high 5 bits the time since the
// previous datagram (in 25 ms steps), a big-endian u16 length (mod 2048),
// then the datagram.
func FuzzServerDatagrams(f *testing.F) {
	rec := func(src, gap int, d []byte) []byte {
		return append(binary.BigEndian.AppendUint16([]byte{byte(src | gap<<3)}, uint16(len(d))), d...)
	}
	var a []byte
	for i := int64(1); i <= 5; i++ {
		a = append(a, rec(0, 0, modernDatagram(i, 100, 5001))...)
		a = append(a, rec(1, 1, legacyDatagram(int32(i-1)))...)
		a = append(a, rec(2, 0, modernDatagram(i, 76, 5001))...)
	}
	a = append(a, rec(0, 0, modernDatagram(-6, 100, 5001))...)
	a = append(a, rec(1, 31, legacyDatagram(-5))...)
	f.Add(a)
	f.Add(append(rec(3, 0, []byte{0x39, 0x38, 0x37, 0x36}), rec(3, 1, make([]byte, 40))...))
	f.Add(append(append(rec(4, 0, modernDatagram(1, 100, 5001)), rec(5, 0, modernDatagram(1, 100, 5001))...), rec(6, 0, modernDatagram(1, 100, 5001))...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var seq []fuzzDatagram
		var at time.Duration
		for len(data) >= 3 && len(seq) < 64 {
			src, gap := int(data[0]&7), time.Duration(data[0]>>3)*25*time.Millisecond
			n := min(int(binary.BigEndian.Uint16(data[1:])%2048), len(data)-3)
			at += gap
			seq = append(seq, fuzzDatagram{src: src, b: data[3 : 3+n], at: at})
			data = data[3+n:]
		}
		runServerDatagrams(t, seq, true)
	})
}

// legacyDatagram is a 2.0.5-style datagram: 12-byte header, v1 header with
// flags 0 and numThreads 1 at 12, 100 bytes.
func legacyDatagram(id int32) []byte {
	b := make([]byte, 100)
	binary.BigEndian.PutUint32(b, uint32(id))
	binary.BigEndian.PutUint32(b[16:], 1)
	binary.BigEndian.PutUint32(b[20:], 5001)
	return b
}

// sameReport compares two parsed reports, their wirebench extensions by
// value.
func sameReport(a, b iperf2.ServerReport) bool {
	if (a.WB == nil) != (b.WB == nil) || a.WB != nil && *a.WB != *b.WB {
		return false
	}
	a.WB, b.WB = nil, nil
	return a == b
}
