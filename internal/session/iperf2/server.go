package iperf2

import (
	"context"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/udpio"
)

// server answers iperf2 tests, TCP and UDP in every flavour, on a
// session.Server's port: its fallback, for what no other protocol claims.
type server struct {
	*session.Server
	cfg session.ServerConfig // the server's, defaults applied
	udp *session.LockedConn

	// udpMu guards udpTests and the fields up to udpStarts, and the tests
	// in udpTests: the listener's reader holds it while it handles a
	// datagram (and sweeps, flushes, stops), the reader of a test's own
	// socket (udpown.go) while it handles a read's datagrams.
	udpMu sync.Mutex
	// listenerHolds says the listener's reader holds udpMu for the read
	// it is handling (holdForListener); only that goroutine touches it.
	listenerHolds bool
	// udpTests are the UDP tests by source, running or just finished.
	udpTests map[netip.AddrPort]*udpTest
	// udpFinished counts the finished tests still in udpTests (kept to
	// answer late FINs).
	udpFinished int
	// udpEnded remembers, for endedKeep, the tests forgotten from
	// udpTests, so a late copy of one of their datagrams opens no phantom
	// test (phantom.go).
	udpEnded map[netip.AddrPort]endedTest
	// udpReports are the server reports to send once the reader has
	// handled the datagrams of one read (Flush).
	udpReports []udpio.Message
	// udpFed are the tests fed datagrams in the read in hand: Flush
	// publishes their counts (udpstream.Receiver.Publish).
	udpFed []*udpTest
	// udpStarts counts the UDP tests started on the socket. A test that
	// saw it move shared the socket's drop counter.
	udpStarts int
	// arrived is the datagram in hand's arrival on the monotonic clock
	// (udpio.Message.ArrivedAt), what waits measure from: never its stamp.
	arrived time.Time
	// finishQ hands the results of ended UDP tests on, off the reader.
	finishQ session.FinishQueue

	groupsMu sync.Mutex
	groups   map[groupKey]*streamGroup // open groups of parallel streams

	// Seams for the fuzz harness, unset in use: a shorter group join
	// window, and where TCP connect-backs are dialled.
	testJoinWindow time.Duration
	testDialBack   func(ctx context.Context, dst string) (net.Conn, error)
}

// Enable makes s answer iperf2 (iperf2, iperf2-legacy and raw, told apart
// per test) on its port, for every connection and source no registered
// protocol claims.
func Enable(s *session.Server) { enable(s) }

// enable is Enable, returning the iperf2 server for tests.
func enable(s *session.Server) *server {
	srv := &server{Server: s, cfg: s.Config(), udp: s.UDPConn(), udpTests: map[netip.AddrPort]*udpTest{},
		udpEnded: map[netip.AddrPort]endedTest{}}
	s.SetFallback(srv)
	return srv
}

// Listen opens a server's sockets (session.Listen) and enables iperf2 on
// them: the server every iperf2-family client talks to.
func Listen(ctx context.Context, cfg session.ServerConfig) (*session.Server, error) {
	s, err := session.Listen(ctx, cfg)
	if err != nil {
		return nil, err
	}
	Enable(s)
	return s, nil
}

// udpDialect names the flavour a UDP test's first datagram speaks: its
// layout, and whether it announced a client header.
func udpDialect(l i2wire.Layout, hasHdr bool) string {
	switch {
	case l == i2wire.LayoutLegacy:
		return session.DialectIperf2Legacy
	case hasHdr:
		return session.DialectIperf2
	}
	return session.DialectRaw
}
