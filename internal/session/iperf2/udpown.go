package iperf2

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/udpio"
)

// A busy UDP test is read on a socket of its own (OpenStreamSocket) by a
// goroutine of its own; its state stays in udpTests, under udpMu, so
// counting, FINs and reports work as on the listener (docs/server.md).

// ownMinPPS is the rate, in datagrams/s over one sweep period, from which a
// test gets a socket of its own: many slow clients must not each hold one.
const ownMinPPS = 5000

// ownEarlyCheck is how many datagrams a test on the listener may receive
// between two rate checks: the listener's reader checks it again (besides
// each sweep) once it has, so a test above ownMinPPS moves within this
// many datagrams of its start, and a slow one costs a check per this many.
const ownEarlyCheck = 1024

// ownBatch is how many datagrams (64 KiB buffers) a read of one may return.
const ownBatch = 32

// ownMinPPSOverride, when above 0 (set by tests only), replaces ownMinPPS.
var ownMinPPSOverride atomic.Int64

// maybeOwnSocket gives t, a running test of src, a socket of its own when
// it received at least ownMinPPS since the last check (a sweep, or
// ownEarlyCheck datagrams). It runs on the listener's reader with s.udpMu
// held.
func (s *server) maybeOwnSocket(ctx context.Context, t *udpTest, src netip.AddrPort, now time.Time) {
	if t.own != nil || t.ownTried || t.refused || t.reverse || t.res.Test.Mode != "" || !s.StreamSockets() {
		return
	}
	minPPS := float64(ownMinPPS)
	if v := ownMinPPSOverride.Load(); v > 0 {
		minPPS = float64(v)
	}
	packets := t.rx.Received()
	dt := now.Sub(t.ratedAt)
	busy := dt > 0 && float64(packets-t.ratedPackets) >= minPPS*dt.Seconds()
	t.ratedAt, t.ratedPackets = now, packets
	if !busy {
		return
	}
	o, err := s.OpenStreamSocket(ctx, src)
	if err != nil {
		t.ownTried = true
		s.Log("own-socket", fmt.Sprintf("udp: %s stays on the listening socket: %v", src, err))
		return
	}
	t.own = o
	s.Go("udp: own socket of "+src.String(), func() { s.readOwn(ctx, t, src, o) })
	session.Hook("udp-own-socket", src)
}

// readOwn reads t's own socket until t ends, the socket closes or ctx
// ends, from when the listener has handled src's datagrams queued there
// (o.Start), so that none is counted out of order.
func (s *server) readOwn(ctx context.Context, t *udpTest, src netip.AddrPort, o *session.StreamSocket) {
	defer o.Close()
	if !o.Start(ctx) {
		return
	}
	locked := false
	unlock := func() {
		if locked {
			s.flushLocked()
			if t.finished {
				o.Close() // late FINs and the rest go to the listener
			}
			s.udpMu.Unlock()
			locked = false
		}
	}
	defer unlock()
	gated := true
	cfg := engine.UDPReceiveConfig{Batch: ownBatch, OnBatch: unlock}
	err := engine.ReceiveUDP(ctx, o.Conn, cfg, func(m *udpio.Message) bool {
		if gated && m.Addr == src {
			gated = false
			unlock() // datagrams of other sources may have come first
			o.AwaitEarlier(ctx, func() bool {
				s.udpMu.Lock()
				defer s.udpMu.Unlock()
				return s.udpTests[src] == t && !t.finished && t.rx.Ahead(m.Buf[:m.N])
			})
		}
		if !locked {
			s.udpMu.Lock()
			locked = true
			session.Hook("udp-own-read", src)
			// Looked up once per read: the tests change only under
			// the lock, and this reader holds it until the read's end.
			if s.udpTests[src] != t {
				o.Close() // a new test from src starts on the listener
				return false
			}
		}
		b := m.Buf[:m.N]
		s.arrived = m.ArrivedAt()
		if m.Addr != src {
			// Arrived between the socket's bind and its connect: a
			// datagram of another test of ours is counted now, as the
			// listener would have; anything else goes back to it.
			other := netip.AddrPortFrom(m.Addr.Addr().Unmap(), m.Addr.Port())
			if s.udpTests[other] != nil {
				s.datagramLocked(ctx, other, b, m.Time)
			} else {
				s.Reinject(m)
			}
			return true
		}
		if t.finished && len(b) >= 12 && t.rx.OpensNewTest(b) {
			o.Close() // a new test from src starts on the listener
			return false
		}
		s.datagramOf(ctx, src, t, b, m.Time)
		return true
	})
	if err != nil && ctx.Err() == nil {
		s.Log("own-socket", fmt.Sprintf("udp: reading the own socket of %s: %v", src, err))
	}
}
