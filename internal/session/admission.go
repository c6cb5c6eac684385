package session

import (
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/result"
)

// Admission of new tests (issue 15): the per-source limits, and the rule
// that a test making this server send traffic of its own to a new
// destination — a UDP reverse test, any connect-back — goes only to a
// source on a local network or in ServerConfig.AllowReverse, and not in
// ServerConfig.DenyReverse. TCP -R and
// --full-duplex (and iperf3 TCP -R/--bidir) send on the connection the
// client opened: its handshake proved the source, and the client's
// receive window paces what we send, so they are allowed from anywhere.

// setAdmission sets up the admission rules from s.cfg (defaults applied).
func (s *Server) setAdmission() {
	s.reverse = admit.Reverse{Allow: s.cfg.AllowReverse, Deny: s.cfg.DenyReverse}
	s.limits = admit.NewLimiter(admit.LimitConfig{MaxActive: max(s.cfg.MaxTestsPerSource, 0), PerSecond: max(s.cfg.NewTestsPerSecondPerSource, 0)})
}

// admitSource takes a per-source slot for a new test from addr. When a
// limit refuses it, the refusal is logged and ok is false.
func (s *Server) admitSource(proto string, addr netip.Addr) (release func(), ok bool) {
	release, err := s.limits.Admit(addr)
	if err != nil {
		s.logs.log("per-source", fmt.Sprintf("%s: refused a new test: %v", proto, err))
		return nil, false
	}
	return release, true
}

// refuseTest reports a test refused before it ran, with why in r.Error,
// as a test of its own (announced and finished at once), so that the
// refusal is in the server's results and JSON.
func (s *Server) refuseTest(r *result.Result, why error) {
	r.Error = why.Error()
	s.finished(s.newTest(r), r)
}

// ownPort records a port this server listens on (TCP and UDP), so that a
// connect-back never targets the server itself.
func (s *Server) ownPort(port int) {
	s.ownMu.Lock()
	s.ownPorts = append(s.ownPorts, uint16(port))
	s.ownMu.Unlock()
}

// selfTarget returns an error when dst is one of this server's own
// listening sockets. A connect-back header names only a port, so a
// datagram with a zero or chosen port field could otherwise make the
// server flood its own socket for the whole test, measuring itself and
// starving every real test on that socket.
func (s *Server) selfTarget(dst netip.AddrPort) error {
	s.ownMu.Lock()
	own := false
	for _, p := range s.ownPorts {
		own = own || p == dst.Port()
	}
	s.ownMu.Unlock()
	if !own || !isLocalAddr(dst.Addr()) {
		return nil
	}
	return fmt.Errorf("refused the connect-back to %s: that is this server's own port (the client must listen on another port, iperf -L)", dst)
}

// isLocalAddr reports whether a is an address of this host: loopback,
// unspecified, or assigned to one of its interfaces.
func isLocalAddr(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	if a.IsLoopback() || a.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ia := range addrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && p.Addr().Unmap() == a {
			return true
		}
	}
	return false
}

// admitConn takes a slot for a newly accepted connection, or closes it at
// once (logged) when admit.ConnsPerTest × MaxTests are being served: a
// flood of connections then costs no goroutine each.
func (s *Server) admitConn(c net.Conn) bool {
	if n, ok := s.openConns.Take(admit.ConnsPerTest * s.cfg.MaxTests); !ok {
		s.logs.log("tcp-conns", fmt.Sprintf("tcp: closed a connection from %s at once: %d connections are open (%d × --max-tests)", c.RemoteAddr(), n, admit.ConnsPerTest))
		c.Close()
		return false
	}
	return true
}

// AdmitTCPTest takes one of the MaxTests slots every source shares for a
// TCP test from peer (the per-source limits are AdmitSource's); when none
// is free the refusal is logged and ok is false.
func (s *Server) AdmitTCPTest(proto string, peer netip.AddrPort) (release func(), ok bool) {
	if n, ok := s.tcpTests.Take(s.cfg.MaxTests); !ok {
		s.logs.log("tcp-full", fmt.Sprintf("%s: %s: refused a new test: %d TCP tests are running (--max-tests)", proto, peer, n))
		return nil, false
	}
	return sync.OnceFunc(s.tcpTests.Give), true
}
