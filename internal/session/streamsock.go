package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/wirebench/wirebench/internal/udpio"
)

// Own sockets for busy UDP sources. The server's listening UDP socket is
// opened up for sharing once bound (udpio.ShareAddr, Linux only); a
// dialect may then give a source a socket of its own, bound to the same
// address and connected to the source, which the kernel prefers for that
// source's datagrams. Datagrams that were already queued on the listener
// when that socket was connected are still read there: ListenerDrained
// says when the listener's reader has handled all of them.

// drainState is what the listener's reader tells the own sockets waiting
// to start: it has found its queue empty.
type drainState struct {
	mu      sync.Mutex
	waiters []chan struct{}
	// back are datagrams own sockets handed back (Reinject).
	back    []udpio.Message
	pending atomic.Int32 // waiters plus back
}

// StreamSockets reports whether OpenStreamSocket can give a source a
// socket of its own (Linux, and the listener's address could be shared).
func (s *Server) StreamSockets() bool { return s.udpShared }

// OpenStreamSocket opens a UDP socket bound to the listener's address and
// port and connected to src, with the listener's options: from then on
// src's datagrams arrive there rather than on the listener. The caller
// reads it on a goroutine of its own and closes it.
func (s *Server) OpenStreamSocket(ctx context.Context, src netip.AddrPort) (udpio.Conn, error) {
	if !s.udpShared {
		return nil, errors.New("this server's UDP socket cannot be shared")
	}
	opt := s.udpOptions(true)
	opt.Control = udpio.SharedControl(opt.Control)
	local := s.udp.LocalAddr()
	if !local.Addr().IsUnspecified() && local.Addr().Is4In6() {
		local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	}
	if local.Addr().IsUnspecified() {
		// Bound to the address src's datagrams come to (the one our
		// replies leave from), not to the wildcard: connecting a
		// wildcard-bound socket moves it in the kernel's tables, and a
		// datagram arriving meanwhile goes to the listener after
		// later ones went to the new socket (out of order).
		a, err := s.replyAddr(src)
		if err != nil {
			return nil, fmt.Errorf("opening a socket of its own for %s: %w", src, err)
		}
		local = netip.AddrPortFrom(a, local.Port())
	}
	c, err := udpio.Dial(ctx, s.network("udp"), src.String(), local.String(), opt)
	if err != nil {
		return nil, fmt.Errorf("opening a socket of its own for %s on %s: %w", src, local, err)
	}
	return c, nil
}

// replyAddr is the local address the kernel sends from to src.
func (s *Server) replyAddr(src netip.AddrPort) (netip.Addr, error) {
	c, err := net.DialUDP(s.network("udp"), nil, net.UDPAddrFromAddrPort(src))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("finding the local address for %s: %w", src, err)
	}
	defer c.Close()
	a := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr()
	if src.Addr().Is4() {
		a = a.Unmap()
	}
	return a, nil
}

// Reinject hands the listener's reader a datagram that arrived on an own
// socket but is not from its source: one that came in the moment between
// that socket's bind and its connect, when it matched every source. The
// reader handles it after its current read, as if it had read it.
func (s *Server) Reinject(m *udpio.Message) {
	c := udpio.Message{Buf: append([]byte(nil), m.Buf[:m.N]...), N: m.N, Addr: m.Addr, Time: m.Time}
	s.drain.mu.Lock()
	s.drain.back = append(s.drain.back, c)
	s.drain.pending.Add(1)
	s.drain.mu.Unlock()
}

// ListenerDrained returns a channel closed once the listener's reader
// has, after this call, found its receive queue empty with every datagram
// it read handled. Call it on the listener's reader goroutine (from the
// fallback's methods), right after connecting an own socket: the
// channel's closing then says every datagram of that source queued on the
// listener before the connect has been handled. It is never closed when
// the queue cannot be inspected (off Linux); callers bound their wait.
func (s *Server) ListenerDrained() <-chan struct{} {
	ch := make(chan struct{})
	s.drain.mu.Lock()
	s.drain.waiters = append(s.drain.waiters, ch)
	s.drain.pending.Add(1)
	s.drain.mu.Unlock()
	return ch
}

// drainWanted says whether an own socket waits for the listener's queue to
// be found empty (the reader's reads then wait briefly).
func (s *Server) drainWanted() bool { return s.drain.pending.Load() > 0 }

// afterListenerRead runs on the listener's reader after each read and its
// datagrams' handling: when own sockets wait, it looks whether the queue
// is empty and, if so, lets them start.
func (s *Server) afterListenerRead(int) {
	if !s.drainWanted() {
		return
	}
	s.drain.mu.Lock()
	back := s.drain.back
	s.drain.back = nil
	s.drain.pending.Add(-int32(len(back)))
	s.drain.mu.Unlock()
	for i := range back {
		s.safeDatagram(s.ctx, &back[i])
	}
	if len(back) > 0 {
		s.flushUDP()
	}
	if empty, ok := udpio.QueueEmpty(s.udp.Conn); !ok || !empty {
		return
	}
	s.drain.mu.Lock()
	for _, ch := range s.drain.waiters {
		close(ch)
	}
	s.drain.pending.Add(-int32(len(s.drain.waiters)))
	s.drain.waiters = s.drain.waiters[:0]
	s.drain.mu.Unlock()
}

// shareUDP opens the listening UDP socket up for own sockets, once it is
// bound (so binding it still failed while another socket held the port).
func (s *Server) shareUDP(uc udpio.Conn) {
	if !udpio.SharingSupported {
		return
	}
	if err := udpio.ShareAddr(uc); err != nil {
		s.logs.log("own-socket", fmt.Sprintf("udp: every source is read on the listening socket: %v", err))
		return
	}
	s.udpShared = true
}
