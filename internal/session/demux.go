package session

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/udpio"
)

// Fallback answers what no registered protocol claims on the server's
// port: iperf2 in all its flavours (internal/session/iperf2 sets it with
// SetFallback). Without one, such connections are closed and such
// datagrams ignored, each with a log line.
type Fallback interface {
	// ServeTCP takes a connection over: first holds the bytes already
	// read (up to four), firstErr why fewer were read, accepted when the
	// connection was taken from the listen queue. The server closes c
	// afterwards.
	ServeTCP(ctx context.Context, c net.Conn, first []byte, firstErr error, accepted time.Time)

	// The methods below run on the server's UDP reader goroutine (the
	// listening socket's) and must not block. The fallback may read busy
	// sources on sockets of their own (OpenStreamSocket) on goroutines of
	// its own, and then guards its state against them itself.

	// OwnsUDP reports whether src has a test of the fallback's (running
	// or kept after its end): its datagrams then skip the other
	// protocols.
	OwnsUDP(src netip.AddrPort) bool
	// Datagram handles one datagram from src received at at (the
	// kernel's wall-clock stamp: what transit times and jitter use), which
	// arrived at arrived on the monotonic clock (udpio.Message.ArrivedAt:
	// what idle timeouts and other waits measure from, which a step of
	// the wall clock does not move).
	Datagram(ctx context.Context, src netip.AddrPort, b []byte, at, arrived time.Time)
	// Flush runs once the datagrams of one read are handled.
	Flush()
	// Sweep runs about every SweepEvery: it ends tests whose client went
	// silent (unless idleOK is false: a late tick cannot tell silence)
	// and forgets finished ones.
	Sweep(ctx context.Context, now time.Time, idleOK bool)
	// Stop runs once the reader ended: it ends the tests still running.
	Stop()
}

// SetFallback makes f answer what no registered protocol claims; call it
// before Serve.
func (s *Server) SetFallback(f Fallback) { s.fallback = f }

// handleTCP reads a new connection's first word (within the header
// timeout) and hands the connection to the protocol it belongs to, or to
// the fallback.
func (s *Server) handleTCP(ctx context.Context, c net.Conn, accepted time.Time) {
	defer c.Close()
	peer := PeerOf(c)
	defer func() {
		if v := recover(); v != nil {
			s.logPanic("tcp: "+peer.String(), v)
		}
	}()
	first, firstErr := s.readFirstWord(c)
	if firstErr == nil {
		if p := s.sniffTCP(first); p != nil {
			p.Serve(ctx, c, first)
			return
		}
	}
	if s.fallback == nil {
		s.logs.log("unclaimed", fmt.Sprintf("tcp: %s: no protocol of this server answers this connection; closed", peer))
		return
	}
	s.fallback.ServeTCP(ctx, c, first, firstErr, accepted)
}

// readFirstWord reads the connection's first four bytes (within the
// header timeout); err says why fewer were read.
func (s *Server) readFirstWord(c net.Conn) ([]byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(s.cfg.HeaderTimeout))
	defer c.SetReadDeadline(time.Time{})
	var word [4]byte
	n, err := io.ReadFull(c, word[:])
	return append([]byte(nil), word[:n]...), err
}

// serveUDP is the UDP demultiplexer: one reader for every test on the port.
func (s *Server) serveUDP(ctx context.Context) error {
	lastSweep, lastEvent := time.Now(), time.Now()
	// sweep runs at a datagram's arrival on the monotonic clock (never
	// the kernel's wall-clock stamp, which a clock step moves), or at a
	// tick (the read found nothing for sweepEvery). A tick that comes
	// late says this goroutine was starved (a busy machine): datagrams
	// may sit unread in the socket, so silence measured against the clock
	// proves nothing then, and no test is ended as idle on such a tick.
	// Arrival times are always sound: the socket queues datagrams in
	// arrival order.
	sweep := func(now time.Time, tick bool) {
		idleOK := !tick || now.Sub(lastEvent) <= SweepEvery+sweepLate
		lastEvent = now
		if now.Sub(lastSweep) >= SweepEvery {
			s.sweepUDP(ctx, now, idleOK)
			lastSweep = now
		}
	}
	cfg := engine.UDPReceiveConfig{Batch: 64, Tick: SweepEvery, OnTick: func(now time.Time) bool { sweep(now, true); return true },
		OnBatch: s.flushUDP, AfterRead: s.afterListenerRead, Quick: s.drainWanted}
	err := engine.ReceiveUDP(ctx, s.udp, cfg, func(m *udpio.Message) bool {
		sweep(m.ArrivedAt(), false) // no clock read per datagram
		s.safeDatagram(ctx, m)
		return true
	})
	if s.fallback != nil {
		s.fallback.Stop()
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading the udp socket: %w", err)
	}
	return nil
}

// SweepEvery is how often the server looks for silent and expired tests.
const SweepEvery = 250 * time.Millisecond

// sweepLate is how much later than sweepEvery after the last event a tick
// may come before it counts as late (see serveUDP).
const sweepLate = SweepEvery / 2

// flushUDP runs after the datagrams of one read.
func (s *Server) flushUDP() {
	for i := range s.udpProtos {
		if f := s.udpProtos[i].Flush; f != nil {
			f()
		}
	}
	if s.fallback != nil {
		s.fallback.Flush()
	}
}

// sweepUDP forgets the sources other protocols are done with and lets the
// fallback sweep its tests.
func (s *Server) sweepUDP(ctx context.Context, now time.Time, idleOK bool) {
	for src, p := range s.udpOwners {
		if p.Done(src) {
			delete(s.udpOwners, src)
		}
	}
	if s.fallback != nil {
		s.fallback.Sweep(ctx, now, idleOK)
	}
}

// safeDatagram handles one arriving datagram; a panic while doing so is
// logged, and the reader carries on with the next datagram (the fallback
// ends the test of a source whose datagram panicked).
func (s *Server) safeDatagram(ctx context.Context, m *udpio.Message) {
	defer func() {
		if v := recover(); v != nil {
			src := netip.AddrPortFrom(m.Addr.Addr().Unmap(), m.Addr.Port())
			s.logPanic("udp: "+src.String(), v)
		}
	}()
	s.datagram(ctx, m)
}

// datagram handles one arriving datagram.
func (s *Server) datagram(ctx context.Context, m *udpio.Message) {
	b := m.Buf[:m.N]
	src := netip.AddrPortFrom(m.Addr.Addr().Unmap(), m.Addr.Port())
	fb := s.fallback
	// Only a source with no test of the fallback's can belong to another
	// protocol: a running test's datagrams skip these lookups.
	if fb == nil || !fb.OwnsUDP(src) {
		if p := s.udpOwner(src, b); p != nil {
			if reply := p.Datagram(src, b, m.Time); reply != nil {
				if _, err := s.udp.WriteBatch([]udpio.Message{{Buf: reply, Addr: src}}); err != nil {
					s.logs.log("reply", fmt.Sprintf("udp: replying to %s (%s): %v", src, p.Name, err))
				}
			}
			return
		}
	}
	if fb == nil {
		s.logs.log("unclaimed", fmt.Sprintf("udp: ignored a %d-byte datagram from %s: no protocol of this server answers it", len(b), src))
		return
	}
	fb.Datagram(ctx, src, b, m.Time, m.ArrivedAt())
}

// udpOwner returns the other protocol that owns src's datagrams: the one
// that claimed it earlier and is not done, or one that claims b now.
func (s *Server) udpOwner(src netip.AddrPort, b []byte) *UDPProtocol {
	if len(s.udpProtos) == 0 {
		return nil
	}
	if p, ok := s.udpOwners[src]; ok {
		if !p.Done(src) {
			return p
		}
		delete(s.udpOwners, src)
	}
	if p := s.sniffUDP(b); p != nil && len(s.udpOwners) < s.cfg.MaxTests {
		if s.udpOwners == nil {
			s.udpOwners = map[netip.AddrPort]*UDPProtocol{}
		}
		s.udpOwners[src] = p
		return p
	}
	return nil
}
