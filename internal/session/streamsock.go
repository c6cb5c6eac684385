package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/udpio"
)

// Own sockets for busy UDP sources. The server's listening UDP socket is
// opened up for sharing once bound (udpio.ShareAddr, Linux only); a
// dialect may then give a source a socket of its own, bound to the same
// address and connected to the source, which the kernel prefers for that
// source's datagrams. Datagrams that were already queued on the listener
// when that socket was connected are still read there: StreamSocket.Start
// waits until the listener's reader has handled all of them.

// drainState is what the listener's reader tells the own sockets waiting
// to start: it has found its queue empty.
type drainState struct {
	mu      sync.Mutex
	waiters []chan struct{}
	// back are datagrams own sockets handed back (Reinject).
	back    []udpio.Message
	pending atomic.Int32 // waiters plus back
}

// MaxStreamSockets bounds the sockets of their own open at once
// (OpenStreamSocket); the other sources stay on the listener. Each costs
// a socket, its reader's goroutine and buffers (taken as used).
const MaxStreamSockets = 32

// streamStartWait bounds how long a StreamSocket's reader waits for the
// listener to handle the source's datagrams queued there before the
// connect (Start); the socket buffers what arrives meanwhile (16 MiB: at
// 200,000 datagrams/s of 1470 bytes, about 100 ms, longer at lower
// rates). The listener drains within a read or two on Linux; this bound
// is for a listener starved of CPU, which a reader starting early would
// make count thousands out of order (seen at 50 ms under the race
// detector). Drops while it waits are counted as the socket's.
const streamStartWait = 2 * time.Second

// StreamSocket is a socket of one source's own (OpenStreamSocket).
type StreamSocket struct {
	// Conn is the socket, connected to the source; read it on one
	// goroutine once Start returned true.
	Conn    udpio.Conn
	drained <-chan struct{}
	once    sync.Once
	closed  chan struct{}
	count   *atomic.Int32
	dropped atomic.Uint64 // Conn's drop count when it closed
}

// StreamSockets reports whether OpenStreamSocket can give a source a
// socket of its own (Linux, and the listener's address could be shared).
func (s *Server) StreamSockets() bool { return s.udpShared }

// OpenStreamSocket opens a UDP socket bound to the listener's port and
// connected to src, with the listener's options: from then on src's
// datagrams arrive there rather than on the listener. Call it on the
// listener's reader goroutine (from the fallback's methods). It fails when
// MaxStreamSockets are open. The caller reads it on a goroutine of its own,
// from Start on, and closes it.
func (s *Server) OpenStreamSocket(ctx context.Context, src netip.AddrPort) (*StreamSocket, error) {
	if !s.udpShared {
		return nil, errors.New("this server's UDP socket cannot be shared")
	}
	if s.streamSockets.Load() >= MaxStreamSockets {
		return nil, fmt.Errorf("%d sockets of their own are open", MaxStreamSockets)
	}
	c, err := s.dialStreamSocket(ctx, src)
	if err != nil {
		return nil, err
	}
	s.streamSockets.Add(1)
	// Asked here, on the listener's reader, right after the connect:
	// what it reads from now on was queued before it or is another
	// source's.
	return &StreamSocket{Conn: c, drained: s.listenerDrained(), closed: make(chan struct{}), count: &s.streamSockets}, nil
}

// Start waits until the listener's reader has handled src's datagrams
// queued there before the connect (or streamStartWait passed), so that
// the socket's reader counts none before an earlier one. It returns false
// when the socket closed or ctx ended meanwhile.
func (o *StreamSocket) Start(ctx context.Context) bool {
	wait := time.NewTimer(streamStartWait)
	defer wait.Stop()
	select {
	case <-o.drained:
	case <-wait.C:
	case <-o.closed:
		return false
	case <-ctx.Done():
		return false
	}
	return true
}

// earlierWait bounds how long AwaitEarlier waits.
const earlierWait = 20 * time.Millisecond

// AwaitEarlier holds the socket's first datagram back while ahead says
// datagrams before it are still uncounted, up to earlierWait (then they
// were lost). The connect moves the socket in the kernel's tables, and a
// datagram of the source routed to the listener in that moment can reach
// its queue after Start found it empty; counted after the first one here,
// it would read as out of order. ahead must take the test's lock itself.
func (o *StreamSocket) AwaitEarlier(ctx context.Context, ahead func() bool) {
	deadline := time.Now().Add(earlierWait)
	for ahead() && ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Microsecond)
	}
}

// Close closes the socket (its reader then ends); safe to call again and
// from any goroutine.
func (o *StreamSocket) Close() {
	o.once.Do(func() {
		if d, ok := o.Conn.Drops(); ok {
			o.dropped.Store(d)
		}
		_ = o.Conn.Close()
		close(o.closed)
		o.count.Add(-1)
	})
}

// Drops is how many datagrams the socket's receive queue dropped.
func (o *StreamSocket) Drops() uint64 {
	select {
	case <-o.closed:
		return o.dropped.Load()
	default:
	}
	d, _ := o.Conn.Drops()
	return max(d, o.dropped.Load())
}

// dialStreamSocket opens the socket of OpenStreamSocket.
func (s *Server) dialStreamSocket(ctx context.Context, src netip.AddrPort) (udpio.Conn, error) {
	opt := s.udpOptions(true)
	opt.Control = udpio.SharedControl(opt.Control)
	// Bound to the listener's own address, wildcard or not, so that it
	// joins the listener's group, where the steering program keeps it from
	// taking any datagram until its connect makes it match src's best.
	// The connect then moves it in the kernel's tables (a wildcard gets
	// src's reply address); a datagram of src the kernel routed to the
	// listener meanwhile is waited for by the reader (awaitStragglers).
	local := s.udp.LocalAddr()
	c, err := udpio.Dial(ctx, s.network("udp"), src.String(), local.String(), opt)
	if err != nil {
		return nil, fmt.Errorf("opening a socket of its own for %s on %s: %w", src, local, err)
	}
	return c, nil
}

// Reinject hands the listener's reader a datagram that arrived on an own
// socket but is not from its source: one that came in the moment between
// that socket's bind and its connect, when it matched every source. The
// reader handles it after its current read, as if it had read it.
func (s *Server) Reinject(m *udpio.Message) {
	c := udpio.Message{Buf: append([]byte(nil), m.Buf[:m.N]...), N: m.N, Addr: m.Addr, Time: m.Time, Arrived: m.Arrived}
	s.drain.mu.Lock()
	s.drain.back = append(s.drain.back, c)
	s.drain.pending.Add(1)
	s.drain.mu.Unlock()
}

// listenerDrained returns a channel closed once the listener's reader
// has, after this call, found its receive queue empty with every datagram
// it read handled. Called on the listener's reader goroutine right after
// connecting a StreamSocket, the channel's closing says every datagram of
// that source queued on the listener before the connect has been handled.
// It is never closed when the queue cannot be inspected; Start bounds the
// wait.
func (s *Server) listenerDrained() <-chan struct{} {
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

// listenUDP opens the listening UDP socket. Where sockets of their own are
// supported it joins an SO_REUSEPORT group (shareUDP makes it the group's
// catch-all), after a plain bind of the address proved it free: a second
// server on the port still gets "address already in use".
func (s *Server) listenUDP(ctx context.Context, addr string) (udpio.Conn, error) {
	opt := s.udpOptions(true)
	if udpio.SharingSupported {
		probe, err := net.ListenPacket(s.network("udp"), addr)
		if err != nil {
			return nil, err
		}
		probe.Close()
		opt.Control = udpio.SharedControl(opt.Control)
	}
	return udpio.Listen(ctx, s.network("udp"), addr, opt)
}

// shareUDP makes the listening UDP socket the catch-all of its group, so
// that own sockets can join it.
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
