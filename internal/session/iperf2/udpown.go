package iperf2

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/udpio"
)

// A busy UDP test is read on a socket of its own, on a goroutine of its
// own, so that the parallel streams of one client (-P) or several busy
// clients are not all read by the listener's one goroutine. The socket is
// bound to the listener's address and port and connected to the test's
// source (session.Server.OpenStreamSocket); Linux then delivers that
// source's datagrams to it. The test's state stays where it was (udpTests,
// under udpMu), so counting, FINs and reports work as on the listener.

// ownMinPPS is the rate, in datagrams/s over one sweep period, at which a
// test gets a socket of its own: below it, the listener's reader keeps up
// easily, and many slow clients must not each hold a socket, a goroutine
// and their buffers.
const ownMinPPS = 5000

// ownMaxSockets bounds the tests reading on sockets of their own at once;
// the others stay on the listener. Each holds up to ownBatch receive
// buffers of 64 KiB and its socket's ring (see udpio), taken as used.
const ownMaxSockets = 32

// ownBatch is how many datagrams one read of an own socket may return.
const ownBatch = 32

// ownStartWait bounds how long an own socket's reader waits for the
// listener to handle the test's datagrams queued there before the
// connect; its socket buffers what arrives meanwhile (16 MiB: at 200,000
// datagrams/s of 1470 bytes, about 100 ms, longer at lower rates). The
// listener drains within a read or two on Linux; this bound is for a
// listener starved of CPU, which a reader starting early would make
// count thousands out of order (seen at 50 ms under the race detector).
// Drops while it waits are counted as the socket's (host drops).
const ownStartWait = 2 * time.Second

// ownMinPPSOverride, when above 0 (set by tests only), replaces ownMinPPS.
var ownMinPPSOverride atomic.Int64

// ownSocket is a test's own socket and what ends its reader.
type ownSocket struct {
	conn   udpio.Conn
	once   sync.Once
	closed chan struct{}
	count  *atomic.Int32
	// dropped is the socket's drop count when it closed.
	dropped atomic.Uint64
}

// close closes the socket (its reader then ends); safe to call again.
func (o *ownSocket) close() {
	o.once.Do(func() {
		if d, ok := o.conn.Drops(); ok {
			o.dropped.Store(d)
		}
		_ = o.conn.Close()
		close(o.closed)
		o.count.Add(-1)
	})
}

// drops is how many datagrams the socket's kernel queue dropped.
func (o *ownSocket) drops() uint64 {
	select {
	case <-o.closed:
		return o.dropped.Load()
	default:
	}
	d, _ := o.conn.Drops()
	return max(d, o.dropped.Load())
}

// closeOwn ends t's own socket and its reader, if it has one; src's
// datagrams come to the listener again.
func (t *udpTest) closeOwn() {
	if t.own != nil {
		t.own.close()
	}
}

// maybeOwnSocket gives t, a running test of src, a socket of its own when
// it received at least ownMinPPS since the last check (a sweep) and fewer
// than ownMaxSockets tests have one. It runs on the listener's reader with
// s.udpMu held.
func (s *server) maybeOwnSocket(ctx context.Context, t *udpTest, src netip.AddrPort, now time.Time) {
	if t.own != nil || t.ownTried || t.refused || t.reverse || t.res.Test.Mode != "" || !s.StreamSockets() {
		return
	}
	minPPS := float64(ownMinPPS)
	if v := ownMinPPSOverride.Load(); v > 0 {
		minPPS = float64(v)
	}
	packets := t.rx.Counters().Packets.Load()
	dt := now.Sub(t.ratedAt)
	busy := dt > 0 && float64(packets-t.ratedPackets) >= minPPS*dt.Seconds()
	t.ratedAt, t.ratedPackets = now, packets
	if !busy || s.ownSockets.Load() >= ownMaxSockets {
		return
	}
	conn, err := s.OpenStreamSocket(ctx, src)
	if err != nil {
		t.ownTried = true
		s.Log("own-socket", fmt.Sprintf("udp: %v; its datagrams are read on the listening socket", err))
		return
	}
	s.ownSockets.Add(1)
	o := &ownSocket{conn: conn, closed: make(chan struct{}), count: &s.ownSockets}
	t.own = o
	// Asked here, on the listener's reader, right after the connect: what
	// the listener reads from now on was queued before it or is another
	// source's.
	drained := s.ListenerDrained()
	s.Go("udp: own socket of "+src.String(), func() { s.readOwn(ctx, t, src, o, drained) })
	session.Hook("udp-own-socket", src)
}

// readOwn reads t's own socket until t ends, the socket closes or ctx
// ends. It starts counting only once the listener has handled src's
// datagrams queued there before the connect (or ownStartWait passed), so
// that none is counted out of order.
func (s *server) readOwn(ctx context.Context, t *udpTest, src netip.AddrPort, o *ownSocket, drained <-chan struct{}) {
	defer o.close()
	wait := time.NewTimer(ownStartWait)
	select {
	case <-drained:
	case <-wait.C:
	case <-o.closed:
	case <-ctx.Done():
	}
	wait.Stop()
	locked := false
	unlock := func() {
		if locked {
			s.flushLocked()
			if t.finished {
				o.close() // late FINs and the rest go to the listener
			}
			s.udpMu.Unlock()
			locked = false
		}
	}
	defer unlock()
	cfg := engine.UDPReceiveConfig{Batch: ownBatch, OnBatch: unlock}
	err := engine.ReceiveUDP(ctx, o.conn, cfg, func(m *udpio.Message) bool {
		if !locked {
			s.udpMu.Lock()
			locked = true
			session.Hook("udp-own-read", src)
		}
		b := m.Buf[:m.N]
		if m.Addr != src {
			// Arrived between the socket's bind and its connect.
			s.Reinject(m)
			return true
		}
		if s.udpTests[src] != t || t.finished && len(b) >= 12 && t.rx.OpensNewTest(b) {
			// A new test from src starts on the listener, where
			// tests start.
			o.close()
			return false
		}
		s.datagramLocked(ctx, src, b, m.Time)
		return true
	})
	if err != nil && ctx.Err() == nil {
		s.Log("own-socket", fmt.Sprintf("udp: reading the own socket of %s: %v", src, err))
	}
}
