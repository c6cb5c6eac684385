package session

import (
	"context"
	"net"
	"net/netip"
	"time"
)

// Other protocols share the server's port with iperf2 (iperf3 control and
// streams, wirebench echo): each is recognised by the first bytes a new
// connection or a new source sends, before iperf2 parsing.

// TCPProtocol is another protocol served on the server's TCP port.
type TCPProtocol struct {
	Name string
	// Match reports whether a connection whose first four bytes are first
	// belongs to this protocol. It must be cheap and must not block.
	Match func(first []byte) bool
	// Serve takes the connection over; first holds the bytes already read.
	// It must return when ctx is done. The server closes c afterwards.
	Serve func(ctx context.Context, c net.Conn, first []byte)
}

// UDPProtocol is another protocol served on the server's UDP port.
type UDPProtocol struct {
	Name string
	// Match reports whether the first datagram b from a new source belongs
	// to this protocol. It must be cheap and must not block.
	Match func(b []byte) bool
	// Datagram handles one datagram from src that this protocol owns (the
	// first one and every later one from the same source, until Done says
	// so). It runs on the server's single reader goroutine: it must not
	// block. It returns the reply to send to src, if any.
	Datagram func(src netip.AddrPort, b []byte, at time.Time) (reply []byte)
	// Flush, if set, runs on the reader once the datagrams of one read
	// are handled (a protocol publishes its counts there).
	Flush func()
	// Done reports whether the protocol is finished with src, so the
	// source may start a new test.
	Done func(src netip.AddrPort) bool
}

// AddTCPProtocol registers p; call it before Serve.
func (s *Server) AddTCPProtocol(p TCPProtocol) { s.tcpProtos = append(s.tcpProtos, p) }

// AddUDPProtocol registers p; call it before Serve.
func (s *Server) AddUDPProtocol(p UDPProtocol) { s.udpProtos = append(s.udpProtos, p) }

// sniffTCP finds the protocol of a new connection from its first bytes.
func (s *Server) sniffTCP(first []byte) *TCPProtocol {
	for i := range s.tcpProtos {
		if s.tcpProtos[i].Match(first) {
			return &s.tcpProtos[i]
		}
	}
	return nil
}

// sniffUDP finds the protocol of a new source from its first datagram.
func (s *Server) sniffUDP(b []byte) *UDPProtocol {
	for i := range s.udpProtos {
		if s.udpProtos[i].Match(b) {
			return &s.udpProtos[i]
		}
	}
	return nil
}
