package iperf2

import (
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/resultcheck"
	"github.com/wirebench/wirebench/internal/udpio"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// ownSocketWatch counts, through the session test hook, the tests given a
// socket of their own and the reads their readers handled.
type ownSocketWatch struct {
	handed, reads atomic.Int64
}

// watchOwnSockets makes every test busy enough for a socket of its own
// (from 1 datagram/s) and counts what the own sockets do, until the test
// ends. Tests that call it must not run in parallel.
func watchOwnSockets(t *testing.T) *ownSocketWatch {
	t.Helper()
	w := &ownSocketWatch{}
	ownMinPPSOverride.Store(1)
	session.SetTestHook(func(point string, _ netip.AddrPort) {
		switch point {
		case "udp-own-socket":
			w.handed.Add(1)
		case "udp-own-read":
			w.reads.Add(1)
		}
	})
	t.Cleanup(func() {
		session.SetTestHook(nil)
		ownMinPPSOverride.Store(0)
	})
	return w
}

// ownStream sends a modern iperf2 UDP test from c: data ids from 1 on.
type ownStream struct {
	t    *testing.T
	c    *net.UDPConn
	b    []byte
	sent int64
	fins int64 // FINs sent: each one the server did not need may be dropped too
}

func newOwnStream(t *testing.T, c *net.UDPConn) *ownStream {
	h := iperf2.NewClientHeader(true, 1, 0)
	h.Amount = iperf2.AmountForDuration(time.Minute)
	b := make([]byte, 16, 200)
	b = h.AppendUDPTo(b)
	return &ownStream{t: t, c: c, b: b[:cap(b)]}
}

// burst sends n data datagrams back to back, then yields briefly so that
// the sender does not simply overrun the server's socket buffer.
func (s *ownStream) burst(n int) {
	s.t.Helper()
	for range n {
		s.sent++
		iperf2.PutDatagram(s.b, iperf2.LayoutModern, s.sent, time.Now())
		if _, err := s.c.Write(s.b); err != nil {
			s.t.Fatalf("sending datagram %d: %v", s.sent, err)
		}
	}
	time.Sleep(200 * time.Microsecond)
}

// finish sends the FIN until the server's report arrives.
func (s *ownStream) finish() iperf2.ServerReport {
	s.t.Helper()
	deadline := time.Now().Add(guard)
	buf := make([]byte, 2048)
	for time.Now().Before(deadline) {
		iperf2.PutDatagram(s.b, iperf2.LayoutModern, -(s.sent + 1), time.Now())
		if _, err := s.c.Write(s.b); err != nil {
			s.t.Fatalf("sending the FIN: %v", err)
		}
		s.fins++
		_ = s.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := s.c.Read(buf)
		if err != nil {
			continue
		}
		rep, _, err := iperf2.ParseServerReport(buf[:n])
		if err != nil {
			s.t.Fatalf("reply is no report: %v", err)
		}
		return rep
	}
	s.t.Fatalf("no report within %v of FINs", guard)
	return iperf2.ServerReport{}
}

// TestOwnSocketCountsExact sends one busy test across its move from the
// listener to a socket of its own: the datagrams queued on the listener
// when the own socket was connected must be counted before the own
// socket's, so nothing reads as lost or out of order, and the totals are
// exact. Losses the server's sockets counted as drops are allowed for
// (a loaded machine), nothing else. Over IPv4, IPv6 and a dual-stack
// listener (IPv4-mapped sources).
func TestOwnSocketCountsExact(t *testing.T) {
	for _, c := range []struct{ name, bind, dial string }{
		{"ipv4", "127.0.0.1", "127.0.0.1"},
		{"ipv6", "::1", "::1"},
		{"dual-stack", "::", "127.0.0.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.dial == "::1" {
				if l, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback}); err != nil {
					t.Skipf("no IPv6 loopback here: %v", err)
				} else {
					l.Close()
				}
			}
			ownSocketCountsExact(t, c.bind, c.dial)
		})
	}
}

func ownSocketCountsExact(t *testing.T, bind, dial string) {
	w := watchOwnSockets(t)
	ts := startServer(t, session.ServerConfig{Bind: bind, IdleTimeout: 10 * time.Second})
	_, port, _ := net.SplitHostPort(ts.addr)
	raddr, err := net.ResolveUDPAddr("udp", net.JoinHostPort(dial, port))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := newOwnStream(t, c)
	deadline := time.Now().Add(guard)
	// Busy until the server hands the test over, and on until the own
	// socket's reader has read, so that datagrams are in flight and
	// queued on the listener while it does.
	for w.handed.Load() == 0 || w.reads.Load() < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("after %v and %d datagrams: %d own sockets, %d own reads; want the test read on its own socket",
				guard, s.sent, w.handed.Load(), w.reads.Load())
		}
		s.burst(1000)
	}
	for range 50 {
		s.burst(1000)
	}
	checkExact(t, ts, c, s, s.finish())
	// Its own socket's reader ends with the test.
	ts.waitIdle()
}

// TestOwnSocketsTwoStreams: two streams from one host (-P 2), each handed
// to a socket of its own while the other's datagrams keep arriving (some
// reach a new socket between its bind and its connect and go back to the
// listener): both get their reports, with exact counts.
func TestOwnSocketsTwoStreams(t *testing.T) {
	w := watchOwnSockets(t)
	ts := startServer(t, session.ServerConfig{Bind: "127.0.0.1", IdleTimeout: 10 * time.Second})
	raddr, err := net.ResolveUDPAddr("udp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	var cs [2]*net.UDPConn
	var ss [2]*ownStream
	for i := range cs {
		if cs[i], err = net.DialUDP("udp", nil, raddr); err != nil {
			t.Fatal(err)
		}
		defer cs[i].Close()
		ss[i] = newOwnStream(t, cs[i])
	}
	deadline := time.Now().Add(guard)
	for w.handed.Load() < 2 || w.reads.Load() < 10 {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d own sockets, %d own reads; want both streams read on their own", guard, w.handed.Load(), w.reads.Load())
		}
		ss[0].burst(500)
		ss[1].burst(500)
	}
	for range 20 {
		ss[0].burst(500)
		ss[1].burst(500)
	}
	for i := range ss {
		checkExact(t, ts, cs[i], ss[i], ss[i].finish())
	}
	ts.waitIdle()
}

// checkExact checks the result and report of s, sent from c: every
// datagram and the FIN counted, none out of order or twice, and what was
// lost no more than the server's sockets dropped.
func checkExact(t *testing.T, ts *testServer, c *net.UDPConn, s *ownStream, rep iperf2.ServerReport) {
	t.Helper()
	r := ts.resultFrom(c.LocalAddr().String())
	rv := receiverOf(t, r)
	total := s.sent + 1 // the FIN counts
	// The socket's drop count holds every datagram it dropped: the data
	// lost, and any copy of the FIN dropped before one got through (the
	// FIN is sent until the report comes), which no gap shows.
	if rv.Total != total || rv.Packets+rv.Lost != total || rv.Lost > rv.HostDrops || rv.HostDrops > rv.Lost+s.fins-1 || rv.OutOfOrder != 0 || dupsOf(rv) != 0 {
		t.Errorf("receiver total/packets/lost/out-of-order/duplicates = %d/%d/%d/%d/%d with %d host drops; sent %d data datagrams and the FIN %d times; want every loss a host drop, and no more host drops than that and the FINs not needed",
			rv.Total, rv.Packets, rv.Lost, rv.OutOfOrder, dupsOf(rv), rv.HostDrops, s.sent, s.fins)
	}
	if int64(rep.Datagrams) != rv.Total || int64(rep.Errors) != rv.Lost || int64(rep.OutOfOrder) != rv.OutOfOrder {
		t.Errorf("report datagrams/lost/out-of-order %d/%d/%d, result %d/%d/%d", rep.Datagrams, rep.Errors, rep.OutOfOrder, rv.Total, rv.Lost, rv.OutOfOrder)
	}
	if rv.HostDrops != 0 {
		t.Logf("the server's sockets dropped %d datagrams (a loaded machine): counted as lost, as they must be", rv.HostDrops)
	}
}

// TestOwnSocketEnds: a test on its own socket whose client goes silent
// ends on the idle timeout, as on the listener, and its reader ends with
// it; a server stopped while one runs leaves no goroutine behind.
func TestOwnSocketEnds(t *testing.T) {
	w := watchOwnSockets(t)
	done := leakCheck(t)
	ts := startServer(t, session.ServerConfig{IdleTimeout: 500 * time.Millisecond})
	start := func() (*net.UDPConn, *ownStream) {
		c := udpSock(t, ts)
		s := newOwnStream(t, c)
		deadline := time.Now().Add(guard)
		had := w.handed.Load()
		for w.handed.Load() == had {
			if time.Now().After(deadline) {
				t.Fatalf("no own socket after %v", guard)
			}
			s.burst(100)
		}
		s.burst(100)
		return c, s
	}
	c, s := start()
	// Silent from now on: the idle timeout ends the test.
	r := ts.resultFrom(c.LocalAddr().String())
	if rv := receiverOf(t, r); rv.Packets != s.sent-rv.Lost || rv.OutOfOrder != 0 || !resultcheck.HasWarning(r, "idle timeout") {
		t.Errorf("idle-ended test: packets/lost/out-of-order %d/%d/%d of %d sent, warnings %q; want all counted and the idle timeout said",
			rv.Packets, rv.Lost, rv.OutOfOrder, s.sent, r.Warnings)
	}
	ts.waitIdle() // its own socket's reader is gone
	// Another one, running when the server stops.
	start()
	done(ts)
}

// TestOwnSocketWithinItsFirstDatagrams: a busy test moves to its own
// socket within ownEarlyCheck datagrams of its start, not at the next
// sweep: its datagrams that the listener handled before the move are at
// most that many (a sweep that comes first moves it sooner still).
func TestOwnSocketWithinItsFirstDatagrams(t *testing.T) {
	ownMinPPSOverride.Store(1)
	var onListener, atHanding atomic.Int64
	atHanding.Store(-1)
	session.SetTestHook(func(point string, _ netip.AddrPort) {
		switch point {
		case "udp-datagram":
			if atHanding.Load() < 0 {
				onListener.Add(1)
			}
		case "udp-own-socket":
			atHanding.CompareAndSwap(-1, onListener.Load())
		}
	})
	t.Cleanup(func() {
		session.SetTestHook(nil)
		ownMinPPSOverride.Store(0)
	})
	ts := startServer(t, session.ServerConfig{IdleTimeout: 10 * time.Second})
	c := udpSock(t, ts)
	s := newOwnStream(t, c)
	for range 15 {
		s.burst(100)
	}
	deadline := time.Now().Add(guard)
	for atHanding.Load() < 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := atHanding.Load(); n < 0 || n > ownEarlyCheck {
		t.Fatalf("the test moved to its own socket after %d of its datagrams on the listener (-1: never); want at most %d", n, ownEarlyCheck)
	}
	t.Logf("moved after %d datagrams on the listener", atHanding.Load())
	checkExact(t, ts, c, s, s.finish())
	ts.waitIdle()
}

// TestReinjectedDatagrams: datagrams an own socket hands back (another
// source's, caught between its bind and its connect) are handled by the
// listener's reader as if it had read them: here a whole short test, whose
// report goes back to its source.
func TestReinjectedDatagrams(t *testing.T) {
	ts := startServer(t, session.ServerConfig{IdleTimeout: 10 * time.Second})
	c := udpSock(t, ts)
	src := c.LocalAddr().(*net.UDPAddr).AddrPort()
	s := newOwnStream(t, c)
	for id := int64(1); id <= 10; id++ {
		iperf2.PutDatagram(s.b, iperf2.LayoutModern, id, time.Now())
		ts.srv.Reinject(&udpio.Message{Buf: s.b, N: len(s.b), Addr: src, Time: time.Now()})
	}
	iperf2.PutDatagram(s.b, iperf2.LayoutModern, -11, time.Now())
	ts.srv.Reinject(&udpio.Message{Buf: s.b, N: len(s.b), Addr: src, Time: time.Now()})
	rep := readReport(t, c)
	if rep.Datagrams != 11 || rep.Errors != 0 || rep.OutOfOrder != 0 {
		t.Errorf("report: %d datagrams, %d lost, %d out of order; want 11, 0, 0", rep.Datagrams, rep.Errors, rep.OutOfOrder)
	}
	if rv := receiverOf(t, ts.resultFrom(src.String())); rv.Packets != 11 || rv.Lost != 0 {
		t.Errorf("result: %d packets, %d lost; want 11, 0", rv.Packets, rv.Lost)
	}
}
