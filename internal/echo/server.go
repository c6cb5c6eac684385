package echo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/tcpinfo"
)

// DefaultIdleTimeout is how long a silent UDP source or TCP connection is
// kept.
const DefaultIdleTimeout = 5 * time.Second

// ServerConfig configures a Server. The zero value is usable.
type ServerConfig struct {
	// IdleTimeout forgets a UDP source and closes a TCP connection that
	// sent nothing for this long (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OnLog receives operational lines (malformed messages); may be nil.
	// It may be called from several goroutines at once.
	OnLog func(msg string)
	// OnSession receives each client's echo test as it ends (see
	// Session); may be nil. It may be called from several goroutines at
	// once, on the server's UDP reader among them: it must not block.
	OnSession func(Session)
}

// Kinds of Session.
const (
	SessionUDP     = "udp"     // UDP requests from one source
	SessionTCP     = "tcp"     // requests on one TCP connection
	SessionConnect = "connect" // a TCP connection that only said bye: one probe of a connect test
)

// Ends of Session.
const (
	EndBye      = "bye"      // the client said bye
	EndEOF      = "eof"      // the TCP client closed without a bye
	EndIdle     = "idle"     // nothing arrived for the idle timeout
	EndError    = "error"    // a malformed message or an I/O error
	EndShutdown = "shutdown" // the server stopped
)

// Session is one client's echo test as this server saw it: a UDP source
// from its first request until it said bye or went silent, or one TCP
// connection. The server answers requests but does not time them (the
// round trip is the client's to measure); for TCP it adds the kernel's
// smoothed RTT of the connection, where the system reports it.
type Session struct {
	// Kind is SessionUDP, SessionTCP or SessionConnect.
	Kind string
	// Peer is the client's address.
	Peer netip.AddrPort
	// Requests and Bytes count the requests answered and their bytes.
	Requests, Bytes int64
	// First and Last are when the first and last message arrived.
	First, Last time.Time
	// End says how the session ended (EndBye, EndEOF, EndIdle, EndError,
	// EndShutdown).
	End string
	// KernelRTT is the smoothed RTT the kernel measured on a TCP
	// connection (tcp_info) when it ended; 0 when unknown.
	KernelRTT time.Duration
}

// Server answers echo requests. Its methods are safe for concurrent use.
type Server struct {
	cfg ServerConfig

	mu      sync.Mutex // guards following fields
	sources map[netip.AddrPort]*source

	// Counters, for tests and logs.
	requests  atomic.Int64 // requests answered (UDP and TCP)
	malformed atomic.Int64 // messages that could not be decoded
}

// source is one UDP client's state.
type source struct {
	first, last     time.Time // the first and last datagram's receive times
	heard           time.Time // cfg.Now() at the last datagram: the idle timeout runs from it
	requests, bytes int64
	bye             bool
}

// NewServer returns an echo server with cfg's defaults filled in.
func NewServer(cfg ServerConfig) *Server {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Server{cfg: cfg, sources: map[netip.AddrPort]*source{}}
}

// Register adds the echo protocols (TCP and UDP) to srv; call it before
// srv.Serve.
func Register(srv *session.Server, cfg ServerConfig) *Server {
	s := NewServer(cfg)
	srv.AddTCPProtocol(s.TCPProtocol())
	srv.AddUDPProtocol(s.UDPProtocol())
	return s
}

// Requests returns how many requests were answered.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Malformed returns how many messages could not be decoded.
func (s *Server) Malformed() int64 { return s.malformed.Load() }

// TCPProtocol describes the TCP echo for session.Server.AddTCPProtocol.
func (s *Server) TCPProtocol() session.TCPProtocol {
	return session.TCPProtocol{Name: "wirebench-echo", Match: HasMagic, Serve: s.ServeTCP}
}

// UDPProtocol describes the UDP echo for session.Server.AddUDPProtocol.
func (s *Server) UDPProtocol() session.UDPProtocol {
	return session.UDPProtocol{Name: "wirebench-echo", Match: matchUDP, Datagram: s.Datagram, Done: s.Done}
}

// matchUDP claims a new source's first datagram only when it is a whole,
// valid request or bye: an iperf2 datagram counter that happens to start
// with the magic does not also carry a version, kind and its exact length.
func matchUDP(b []byte) bool {
	m, err := Parse(b)
	return err == nil && m.Kind != KindReply
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.OnLog != nil {
		s.cfg.OnLog(fmt.Sprintf(format, args...))
	}
}

// logMalformed counts a malformed message and logs the 1st, 2nd, 4th,
// 8th, ... so that a flood of junk cannot flood the log.
func (s *Server) logMalformed(format string, args ...any) {
	n := s.malformed.Add(1)
	if n&(n-1) == 0 {
		s.logf(format+fmt.Sprintf(" (%d malformed so far)", n), args...)
	}
}

// Datagram answers one UDP datagram from src: a request gets a reply (a
// copy with the kind changed), a bye forgets src, anything else is counted
// and dropped. It does not block.
func (s *Server) Datagram(src netip.AddrPort, b []byte, at time.Time) []byte {
	if at.IsZero() {
		at = s.cfg.Now()
	}
	m, err := Parse(b)
	s.mu.Lock()
	src0 := s.sources[src]
	if src0 == nil {
		src0 = &source{first: at}
		s.sources[src] = src0
	}
	src0.last, src0.heard = at, s.cfg.Now()
	if err == nil && m.Kind == KindBye {
		src0.bye = true
	}
	if err == nil && m.Kind == KindRequest {
		src0.requests++
		src0.bytes += int64(len(b))
	}
	s.mu.Unlock()
	if err != nil || m.Kind != KindRequest {
		if err != nil {
			s.logMalformed("echo: udp: dropped a malformed message from %s: %v", src, err)
		}
		return nil
	}
	s.requests.Add(1)
	reply := append([]byte(nil), b...)
	setKind(reply, KindReply)
	return reply
}

// Done reports whether src is finished (said bye, or silent for the idle
// timeout) and, if so, forgets it.
func (s *Server) Done(src netip.AddrPort) bool {
	now := s.cfg.Now()
	s.mu.Lock()
	st := s.sources[src]
	if st == nil {
		s.mu.Unlock()
		return true
	}
	// Silence is measured on cfg.Now's clock (monotonic), not from the
	// receive time, which may be the kernel's wall-clock stamp: a step of
	// the wall clock must not end a session.
	if !st.bye && now.Sub(st.heard) <= s.cfg.IdleTimeout {
		s.mu.Unlock()
		return false
	}
	delete(s.sources, src)
	s.mu.Unlock()
	end := EndIdle
	if st.bye {
		end = EndBye
	}
	s.ended(Session{Kind: SessionUDP, Peer: src, Requests: st.requests, Bytes: st.bytes, First: st.first, Last: st.last, End: end})
	return true
}

// ended hands a finished session to OnSession.
func (s *Server) ended(ss Session) {
	if s.cfg.OnSession != nil {
		s.cfg.OnSession(ss)
	}
}

// Sources returns how many UDP sources are remembered.
func (s *Server) Sources() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sources)
}

// ServeTCP echoes the requests on c until EOF, a bye, the idle timeout,
// an error or ctx's end. first holds the bytes the caller already read
// (the magic; at most HeaderLen bytes). It does not close c.
func (s *Server) ServeTCP(ctx context.Context, c net.Conn, first []byte) {
	ss := Session{Kind: SessionTCP, First: s.cfg.Now(), End: EndError}
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ss.Peer = a.AddrPort()
	}
	ss.Last = ss.First
	defer func() {
		if ss.Requests == 0 && ss.End == EndBye {
			ss.Kind = SessionConnect
		}
		if ctx.Err() != nil && ss.End != EndBye && ss.End != EndEOF {
			ss.End = EndShutdown
		}
		if sc, ok := c.(syscall.Conn); ok {
			if ti, err := tcpinfo.Read(sc); err == nil {
				ss.KernelRTT = ti.RTT
			}
		}
		s.ended(ss)
	}()
	if len(first) > HeaderLen {
		s.logf("echo: tcp: %s: %d bytes read before the echo handler (want at most %d)", c.RemoteAddr(), len(first), HeaderLen)
		return
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 0, 4096)
	buf = append(buf, first...)
	for {
		msg, err := s.readTCP(c, buf[:len(buf):cap(buf)], len(buf))
		buf = buf[:0]
		if msg == nil && err == nil {
			return // malformed, logged
		}
		if err != nil {
			switch {
			case errors.Is(err, io.EOF):
				ss.End = EndEOF
			case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil:
				ss.End = EndIdle
			}
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				s.logf("echo: tcp: %s: %v", c.RemoteAddr(), err)
			}
			return
		}
		ss.Last = s.cfg.Now()
		m, _ := ParseHeader(msg)
		if m.Kind == KindBye {
			ss.End = EndBye
			return
		}
		if m.Kind == KindReply {
			continue
		}
		s.requests.Add(1)
		setKind(msg, KindReply)
		_ = c.SetWriteDeadline(s.cfg.Now().Add(s.cfg.IdleTimeout))
		if _, err := c.Write(msg); err != nil {
			if ctx.Err() == nil {
				s.logf("echo: tcp: %s: writing a reply: %v", c.RemoteAddr(), err)
			}
			return
		}
		ss.Requests++
		ss.Bytes += int64(len(msg))
		buf = msg[:0]
	}
}

// readTCP reads one whole message into buf, of which the first have bytes
// are already there. A clean EOF before a message starts returns io.EOF.
func (s *Server) readTCP(c net.Conn, buf []byte, have int) ([]byte, error) {
	buf = buf[:max(have, HeaderLen)]
	_ = c.SetReadDeadline(s.cfg.Now().Add(s.cfg.IdleTimeout))
	if _, err := io.ReadFull(c, buf[have:HeaderLen]); err != nil {
		if have == 0 && errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("reading a message header: %w", err)
	}
	m, err := ParseHeader(buf)
	if err != nil {
		s.logMalformed("echo: tcp: %s: %v", c.RemoteAddr(), err)
		return nil, nil
	}
	if cap(buf) < m.Len {
		nb := make([]byte, m.Len)
		copy(nb, buf)
		buf = nb
	}
	buf = buf[:m.Len]
	if _, err := io.ReadFull(c, buf[HeaderLen:]); err != nil {
		return nil, fmt.Errorf("reading a %d-byte message: %w", m.Len, err)
	}
	return buf, nil
}
