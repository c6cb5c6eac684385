package session

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/udpio"
)

// What a dialect package (internal/session/iperf2, internal/session/iperf3) needs of the server it
// registers with and of the client config it runs: the server's own
// bookkeeping (test numbers, admission, CPU, logs, listeners) and the
// config's socket set-up, so that every dialect shares one of each.

// Config returns the server's configuration, defaults applied.
func (s *Server) Config() ServerConfig { return s.cfg }

// Log writes an operational log line of the given kind, rate-limited per
// kind (OnLog).
func (s *Server) Log(kind, msg string) { s.logs.log(kind, msg) }

// LogPanic logs a recovered panic of what.
func (s *Server) LogPanic(what string, v any) { s.logPanic(what, v) }

// Catch runs f, turning a panic into an error logged as what's.
func (s *Server) Catch(what string, f func() error) error { return s.catch(what, f) }

// Go runs f on its own goroutine, counted until it returns (Serve waits
// for it), with a panic logged as what's instead of ending the process.
func (s *Server) Go(what string, f func()) { s.goTest(what, f) }

// NoteAccept numbers a newly accepted connection in accept order; the
// returned func forgets it.
func (s *Server) NoteAccept(c net.Conn) func() { return s.noteAccept(c) }

// AcceptOrder is c's number from NoteAccept (0 when it has none).
func (s *Server) AcceptOrder(c net.Conn) uint64 { return s.acceptOrder(c) }

// AdmitSource applies the per-source test limits to a new test from addr
// over proto; release ends the test's share.
func (s *Server) AdmitSource(proto string, addr netip.Addr) (release func(), ok bool) {
	return s.admitSource(proto, addr)
}

// CheckReverse says whether reverse and connect-back tests may send to
// addr (nil) or why not.
func (s *Server) CheckReverse(addr netip.Addr) error { return s.reverse.Check(addr) }

// RefuseTest reports a test refused for why.
func (s *Server) RefuseTest(r *result.Result, why error) { s.refuseTest(r, why) }

// NewTest numbers a test and announces it (OnTestStart).
func (s *Server) NewTest(r *result.Result) int { return s.newTest(r) }

// QuietTest numbers a test that is neither announced nor handed on (a
// wirebench probe's).
func (s *Server) QuietTest() int { return s.quietTest() }

// Finished hands a test's result on (OnResult) and ends a one-shot
// server.
func (s *Server) Finished(id int, r *result.Result) { s.finished(id, r) }

// Interval returns what receives test id's intervals (nil when nobody
// listens).
func (s *Server) Interval(id int) func(result.Interval) { return s.interval(id) }

// CPUSoFar is the process's CPU time, in seconds, since test id started.
func (s *Server) CPUSoFar(id int) (total, user, system float64) { return s.cpuSoFar(id) }

// Network is base ("tcp" or "udp") narrowed to IPv6 when the server
// listens on IPv6 only.
func (s *Server) Network(base string) string { return s.network(base) }

// ListenTCP opens a TCP listener on port with the server's socket options.
func (s *Server) ListenTCP(ctx context.Context, port int) (net.Listener, error) {
	return s.listenTCP(ctx, port)
}

// UDPOptions are the options of the server's UDP sockets (listener: a
// listening socket rather than a connected one).
func (s *Server) UDPOptions(listener bool) udpio.Options { return s.udpOptions(listener) }

// UDPConn is the server's main UDP socket, safe for concurrent writes.
func (s *Server) UDPConn() *LockedConn { return s.udp }

// OwnPort notes a port this server listens on, so that no test is sent
// back to it.
func (s *Server) OwnPort(port int) { s.ownPort(port) }

// AddListener adds work Serve runs until its context ends (a dialect's
// own port).
func (s *Server) AddListener(run func(ctx context.Context)) { s.extra = append(s.extra, run) }

// RecoverPanic, deferred, logs a panic of what instead of ending the
// process.
func (s *Server) RecoverPanic(what string) { s.recoverPanic(what) }

// Hold makes Serve wait, before it returns, for work that is not a
// goroutine of Go's (a timer's, a queue's): it returns the func that ends
// the wait.
func (s *Server) Hold() (done func()) {
	s.wg.Add(1)
	return s.wg.Done
}

// SelfTarget says why a test may not send to dst (one of this server's
// own ports on a local address), or nil.
func (s *Server) SelfTarget(dst netip.AddrPort) error { return s.selfTarget(dst) }

// CPUJoined forgets the CPU sample of stream id, which joined the group
// test gid: the group's figure covers it.
func (s *Server) CPUJoined(id, gid int) { s.cpuJoined(id, gid) }

// Context is Serve's context, for work a test starts later (nil before
// Serve).
func (s *Server) Context() context.Context { return s.ctx }

// OtherUDPSources counts the sources other protocols than the fallback own
// on the main UDP socket; call it on the UDP reader goroutine only (from
// the fallback's methods).
func (s *Server) OtherUDPSources() int { return len(s.udpOwners) }

// RecordSocket puts the socket options of conn (and caps, for UDP) into r.
func (s *Server) RecordSocket(r *result.Result, conn net.Conn, caps *udpio.Capabilities) {
	s.recordSocket(r, conn, caps)
}

// Connected reports a new connection to OnConnected.
func (c *ClientConfig) Connected(local fmt.Stringer, peer string) { c.connected(local, peer) }

// Defaults fills what every dialect defaults alike; port, UDP length and
// UDP rate are each dialect's own.
func (c *ClientConfig) Defaults(port, udpLength int, udpRate float64) {
	c.defaults(port, udpLength, udpRate)
}

// Addr is host:port of the peer.
func (c *ClientConfig) Addr() string { return c.addr() }

// PPS returns the datagram rate the config asks for.
func (c *ClientConfig) PPS() float64 { return c.pps() }

// SocketOptions are the options of the test's data sockets.
func (c *ClientConfig) SocketOptions() sockopt.Options { return c.socketOptions() }

// Network is "tcp" or "udp" (udp), narrowed to IPv6 with -V.
func (c *ClientConfig) Network(udp bool) string { return c.network(udp) }

// ValidateSockets checks the socket fields (bind address, ports, options).
func (c *ClientConfig) ValidateSockets() error { return c.validateSockets() }

// DialTCP opens data stream i's TCP connection.
func (c *ClientConfig) DialTCP(ctx context.Context, i int) (net.Conn, error) {
	return c.dialTCP(ctx, i)
}

// DialUDP opens data stream i's connected UDP socket.
func (c *ClientConfig) DialUDP(ctx context.Context, i int) (udpio.Conn, error) {
	return c.dialUDP(ctx, i)
}

// RecordSocket puts the socket options of conn (and caps, for UDP) into r.
func (c *ClientConfig) RecordSocket(r *result.Result, conn net.Conn, caps *udpio.Capabilities) {
	c.recordSocket(r, conn, caps)
}
