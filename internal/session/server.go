package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/wirebench/wirebench/internal/priority"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/version"
)

// ServerConfig configures a Server. The zero value of each field means its
// default.
type ServerConfig struct {
	// Bind is the local address to listen on; "" listens on all.
	Bind string
	// Port is the TCP and UDP port (default 5001); 0 after Listen means
	// an ephemeral port was asked for with Port = -1.
	Port int
	// OneShot makes Serve return after the first test ends (-1).
	OneShot bool
	// Interval is the reporting interval of each test (0 = none).
	Interval time.Duration
	// IdleTimeout ends a UDP test whose client went silent without a FIN,
	// and a TCP connection that sends nothing (default 5 s).
	IdleTimeout time.Duration
	// HeaderTimeout bounds the wait for a TCP test header (default 4 s,
	// iperf2's TESTEXCHANGETIMEOUT); a connection that sends nothing by then
	// is treated as header-less data.
	HeaderTimeout time.Duration
	// MaxTests bounds the UDP, iperf3 and TCP tests open at once, each
	// (default 1024), and connections served at once (admit.ConnsPerTest
	// times it): what a flood of sources can make the server hold.
	MaxTests int
	// MaxDuration caps what this server sends in reverse and connect-back
	// tests, whatever a client asks (default 1 hour).
	MaxDuration time.Duration
	// MaxSendRate caps, in bit/s of payload, the rate this server sends at
	// in UDP tests a client asked for without authenticating (one spoofable
	// datagram asks): iperf2 UDP reverse and connect-back tests are sent no
	// faster, iperf3 UDP -R and --bidir tests asking for more (or unpaced)
	// are refused (0 = admit.DefaultMaxSendRate, negative = no cap).
	MaxSendRate float64
	// AllowReverse lists the sources, beyond loopback, private, CGNAT,
	// benchmarking, link-local and ULA networks (admit.Classify), that UDP
	// reverse and connect-back tests may send to; tests that would send
	// elsewhere are refused (see docs/server.md).
	AllowReverse []netip.Prefix
	// DenyReverse lists sources UDP reverse and connect-back tests never
	// send to, even on those networks or in AllowReverse.
	DenyReverse []netip.Prefix
	// MaxTestsPerSource bounds the tests one source address has open at
	// once (0 = admit.DefaultMaxActive, negative = no limit).
	MaxTestsPerSource int
	// NewTestsPerSecondPerSource bounds how fast one source address opens
	// new tests, after a burst of MaxTestsPerSource (0 =
	// admit.DefaultPerSecond, negative = no limit).
	NewTestsPerSecondPerSource float64
	// Socket holds the options for the server's sockets (-w, -M, -N, -S,
	// -T), set on the listeners so accepted connections inherit them, and
	// on connect-back sockets.
	Socket sockopt.Options
	// NoGSO and NoGRO switch off UDP send and receive offload, as the
	// client's fields of the same names do (--no-gso, --no-gro).
	NoGSO, NoGRO bool
	// IPv6 listens on IPv6 only (-V); "" Bind then means "::".
	IPv6 bool
	// Nice is the scheduling priority the server command asks for
	// (priority.Raise; 0 leaves it alone), and Priority what it got: said
	// in the log line of a UDP reader that fell behind.
	Nice     int
	Priority priority.Outcome

	// OnTestStart is called when a test is accepted, with the test number
	// and a description of the peer; OnInterval with each interval of a
	// test; OnResult with each finished test; OnLog with operational log
	// lines (garbage received, refused connections). All may be nil; they
	// may be called from several goroutines at once.
	OnTestStart func(id int, r *result.Result)
	OnInterval  func(id int, in result.Interval)
	OnResult    func(id int, r *result.Result)
	OnLog       func(msg string)
	// OnGroupInterval is called with each interval of a group of parallel
	// streams from one client (iperf2 -P, see group.go): group is the
	// group's test number (its first stream's), streams each stream's
	// share by its own test number, sum their SUM (nil while the group
	// has one stream). When it is nil, the streams' shares go to
	// OnInterval. A group's result comes to OnResult once, under the
	// group's number, with the streams in Result.Streams.
	OnGroupInterval func(group int, streams []StreamInterval, sum *result.Interval)
}

func (c *ServerConfig) applyDefaults() {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Port < 0 {
		c.Port = 0
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.HeaderTimeout == 0 {
		c.HeaderTimeout = 4 * time.Second
	}
	if c.MaxTests == 0 {
		c.MaxTests = 1024
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = time.Hour
	}
	if c.MaxSendRate == 0 {
		c.MaxSendRate = admit.DefaultMaxSendRate
	}
	if c.MaxTestsPerSource == 0 {
		c.MaxTestsPerSource = admit.DefaultMaxActive
	}
	if c.NewTestsPerSecondPerSource == 0 {
		c.NewTestsPerSecondPerSource = admit.DefaultPerSecond
	}
}

// Server listens on one port for TCP and UDP and hands each new
// connection or source to the protocol it belongs to (AddTCPProtocol,
// AddUDPProtocol, SetFallback), any number of tests at once.
type Server struct {
	cfg  ServerConfig
	tcp  net.Listener
	udp  *LockedConn
	port int

	nextID  atomic.Int64
	quietID atomic.Int64 // numbers of quiet (probe) tests, negated
	wg      sync.WaitGroup
	running atomic.Int64 // goroutines started by goTest still running
	oneShot chan struct{}
	once    sync.Once
	logs    *rateLog
	// reverse says where reverse and connect-back tests may send; limits
	// holds the per-source test limits (nil = none).
	reverse admit.Reverse
	limits  *admit.Limiter
	// ownPorts are the ports this server listens on (selfTarget).
	ownMu    sync.Mutex
	ownPorts []uint16

	tcpProtos []TCPProtocol
	udpProtos []UDPProtocol
	// fallback answers what no protocol claims (iperf2; SetFallback).
	fallback Fallback
	// extra are more listeners (iperf3's own port) that Serve runs until
	// its context ends.
	extra []func(ctx context.Context)
	// udpOwners belongs to the UDP reader goroutine.
	udpOwners map[netip.AddrPort]*UDPProtocol
	ctx       context.Context // Serve's context, for work started later
	// udpShared says the listening UDP socket may be shared with sockets
	// connected to one source (streamsock.go); drain tells those when
	// the listener has handled what was queued for them.
	udpShared     bool
	drain         drainState
	streamSockets atomic.Int32 // StreamSockets open

	cpuMu sync.Mutex
	cpuAt map[int]*cpuStart // the process's CPU time at each open test's start
	// cpuStarts counts the tests noted (noteCPU), cpuJoins the streams
	// that joined an open group while open themselves (cpuJoined).
	cpuStarts, cpuJoins uint64

	// accepted numbers TCP connections in accept order (net.Conn →
	// uint64) while they are served: handlers read their first bytes
	// concurrently, and iperf3 tells its data streams apart only by the
	// order they were connected in.
	accepted  sync.Map
	acceptSeq atomic.Uint64
	// openConns counts the accepted TCP connections being served,
	// tcpTests the TCP tests admitted (AdmitTCPTest) and not yet ended.
	openConns, tcpTests admit.Gate
}

// noteAccept numbers a newly accepted connection; the returned func
// forgets it.
func (s *Server) noteAccept(c net.Conn) func() {
	s.accepted.Store(c, s.acceptSeq.Add(1))
	return func() { s.accepted.Delete(c) }
}

// acceptOrder is c's number from noteAccept (0 when it has none).
func (s *Server) acceptOrder(c net.Conn) uint64 {
	n, _ := s.accepted.Load(c)
	v, _ := n.(uint64)
	return v
}

// Listen opens the server's TCP and UDP sockets.
func Listen(ctx context.Context, cfg ServerConfig) (*Server, error) {
	cfg.applyDefaults()
	s := &Server{cfg: cfg, oneShot: make(chan struct{}), logs: newRateLog(cfg.OnLog)}
	s.setAdmission()
	if err := cfg.Socket.Validate(); err != nil {
		return nil, err
	}
	// An ephemeral port is free for TCP when the kernel picks it, but a
	// UDP socket (any client's) may hold the same number: try another.
	tries := 1
	if cfg.Port == 0 {
		tries = 20
	}
	var err error
	for try := 0; try < tries; try++ {
		if err = s.listen(ctx); err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// listen opens the TCP socket on cfg.Port and the UDP one on the same port.
func (s *Server) listen(ctx context.Context) error {
	ln, err := s.listenTCP(ctx, s.cfg.Port)
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	uaddr := net.JoinHostPort(s.cfg.Bind, strconv.Itoa(port))
	uc, err := s.listenUDP(ctx, uaddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("listening on udp %s: %w", uaddr, err)
	}
	s.tcp, s.port, s.udp = ln, port, &LockedConn{Conn: uc}
	s.shareUDP(uc)
	s.ownPort(port)
	return nil
}

// Port returns the port the server listens on (TCP and UDP).
func (s *Server) Port() int { return s.port }

// Serve answers tests until ctx is done (or, with OneShot, until the first
// test ended), then closes the sockets and waits for running tests to end.
func (s *Server) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.ctx = ctx
	for _, run := range s.extra {
		s.goTest("listener", func() { run(ctx) })
	}
	go func() {
		select {
		case <-s.oneShot:
			cancel()
		case <-ctx.Done():
		}
		s.tcp.Close()
	}()
	errc := make(chan error, 2)
	go func() { errc <- s.serveTCP(ctx) }()
	go func() { errc <- s.serveUDP(ctx) }()
	var first error
	for i := 0; i < 2; i++ {
		if err := <-errc; err != nil && first == nil && ctx.Err() == nil {
			first = err
			cancel()
		}
	}
	s.udp.Close()
	s.wg.Wait()
	s.logs.flush()
	return first
}

// quietTest numbers a test that is neither announced nor handed on (a
// wirebench probe's; see iperf3.WBParams.Probe). Its numbers are negative
// and counted apart, so a probe before a test does not shift the numbers
// users see ([  1] stays the first real test).
func (s *Server) quietTest() int { return -int(s.quietID.Add(1)) }

// newTest numbers a test and announces it.
func (s *Server) newTest(r *result.Result) int {
	id := int(s.nextID.Add(1))
	s.noteCPU(id)
	if s.cfg.OnTestStart != nil {
		s.cfg.OnTestStart(id, r)
	}
	return id
}

// finished hands a result on and ends a one-shot server.
func (s *Server) finished(id int, r *result.Result) {
	s.fillTestCPU(id, r)
	if s.cfg.OnResult != nil {
		s.cfg.OnResult(id, r)
	}
	if s.cfg.OneShot {
		s.once.Do(func() { close(s.oneShot) })
	}
}

func (s *Server) interval(id int) func(result.Interval) {
	if s.cfg.OnInterval == nil {
		return nil
	}
	return func(in result.Interval) {
		defer s.recoverPanic(fmt.Sprintf("test %d: interval report", id))
		s.cfg.OnInterval(id, in)
	}
}

func (s *Server) serveTCP(ctx context.Context) error {
	for {
		c, err := s.tcp.Accept()
		accepted := time.Now()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.logs.log("accept", fmt.Sprintf("accepting a tcp connection: %v", err))
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !s.admitConn(c) {
			continue
		}
		forget := s.noteAccept(c)
		s.goTest("tcp: "+c.RemoteAddr().String(), func() {
			defer s.openConns.Give()
			defer forget()
			s.handleTCP(ctx, c, accepted)
		})
	}
}

// PeerOf returns a connection's remote address.
func PeerOf(c net.Conn) netip.AddrPort {
	ap, _ := netip.ParseAddrPort(c.RemoteAddr().String())
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// NewServerResult starts a server-side result.
func NewServerResult(proto, dialect string, peer netip.AddrPort, port int) *result.Result {
	r := result.New("server")
	r.Test = result.Test{Protocol: proto, Direction: result.DirReceive, Dialect: dialect, Host: peer.Addr().String(),
		Port: port, Peer: peer.String(), Streams: 1}
	return r
}

// VersionString is this build's version, for results.
func VersionString() string { return version.String() }

// StreamInterval is one stream's share of a group interval.
type StreamInterval struct {
	ID int // the stream's test number
	result.Interval
}
