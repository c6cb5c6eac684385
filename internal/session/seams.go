package session

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/udpio"
)

// Seams for the tests of the packages that answer on a Server
// (internal/session/iperf2's fuzz and fake-socket tests): a server on
// sockets of the test's, fed, swept and waited for by hand. Nothing else
// calls them.

// NewTestServer is a server on udp (a socket the test fakes) and ln (nil:
// none), said to listen on port, with cfg's defaults and admission rules;
// ctx stands for Serve's context. It does not serve: the test hands it
// datagrams (FeedDatagram) and connections (ServeConn), sweeps it
// (SweepUDP) and waits for its tests (WaitTests).
func NewTestServer(ctx context.Context, cfg ServerConfig, ln net.Listener, udp udpio.Conn, port int) *Server {
	cfg.applyDefaults()
	s := &Server{cfg: cfg, tcp: ln, udp: &LockedConn{Conn: udp}, port: port, oneShot: make(chan struct{}),
		logs: newRateLog(cfg.OnLog), ctx: ctx}
	s.setAdmission()
	return s
}

// FeedDatagram handles m as the UDP reader does.
func (s *Server) FeedDatagram(ctx context.Context, m *udpio.Message) { s.safeDatagram(ctx, m) }

// ServeUDP runs the server's UDP reader on its socket until ctx ends, as
// Serve does: its datagrams, sweeps and ticks.
func (s *Server) ServeUDP(ctx context.Context) error { return s.serveUDP(ctx) }

// SweepUDP sweeps the UDP tests at now as the reader does every
// SweepEvery.
func (s *Server) SweepUDP(ctx context.Context, now time.Time, idleOK bool) {
	s.sweepUDP(ctx, now, idleOK)
}

// ServeConn serves c, an accepted connection, on a goroutine of the
// server's, as its accept loop does.
func (s *Server) ServeConn(ctx context.Context, c net.Conn, accepted time.Time) {
	s.goTest("tcp: "+c.RemoteAddr().String(), func() { s.handleTCP(ctx, c, accepted) })
}

// WaitTests waits for every goroutine the server's tests started.
func (s *Server) WaitTests() { s.wg.Wait() }

// Running counts the goroutines of Go still running.
func (s *Server) Running() int64 { return s.running.Load() }

// SetTestHook makes Hook call f (nil: nothing), to inject panics at the
// named points of a test's life.
func SetTestHook(f func(point string, peer netip.AddrPort)) {
	if f == nil {
		testHook.Store(nil)
		return
	}
	testHook.Store(&f)
}

// testTrace, when set (by tests only), is told each step of a UDP test's
// end: its FIN read, its report queued, sent or not, late FINs answered or
// not. A test that saw a client go without its report asks the server for
// these, so that the failure says what the server did.
var testTrace atomic.Pointer[func(peer netip.AddrPort, step string)]

// SetTestTrace makes Trace call f (nil: nothing).
func SetTestTrace(f func(peer netip.AddrPort, step string)) {
	if f == nil {
		testTrace.Store(nil)
		return
	}
	testTrace.Store(&f)
}

// Tracing reports whether a test traces (SetTestTrace): callers build the
// step's words only then.
func Tracing() bool { return testTrace.Load() != nil }

// Trace tells the test's trace, if any, of one step of peer's test.
func Trace(peer netip.AddrPort, step string) {
	if f := testTrace.Load(); f != nil {
		(*f)(peer, step)
	}
}
