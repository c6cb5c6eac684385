package engine_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
)

// hangGuard bounds how long a test waits for a receiver that should end
// at once; it only tells a hang from an end, on any machine.
const hangGuard = 20 * time.Second

// racer holds a fake socket's read deadline; its reads keep to it (zero:
// until Close), and nothing ever arrives. When armed, the next future or
// zero deadline set cancels the context first and waits until the
// context's AfterFunc has set its past deadline, then sets its own: the
// cancellation lands between a receive loop's look at ctx and its
// SetReadDeadline, every time, which on a real socket happens only now
// and then.
type racer struct {
	mu       sync.Mutex
	deadline time.Time
	armed    bool
	cancel   context.CancelFunc
	past     chan struct{} // closed once a past deadline was set after arming
	pastOnce *sync.Once
	closed   chan struct{}
}

func newRacer(cancel context.CancelFunc) *racer {
	r := &racer{cancel: cancel, closed: make(chan struct{})}
	r.arm()
	return r
}

// arm makes the next future or zero deadline race a cancellation.
func (r *racer) arm() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.armed, r.past, r.pastOnce = true, make(chan struct{}), new(sync.Once)
}

func (r *racer) SetReadDeadline(t time.Time) error {
	r.mu.Lock()
	past, once, armed := r.past, r.pastOnce, r.armed
	if !t.IsZero() && t.Before(time.Now()) {
		r.deadline = t
		r.mu.Unlock()
		once.Do(func() { close(past) })
		return nil
	}
	r.armed = false
	r.mu.Unlock()
	if armed {
		r.cancel()
		<-past
	}
	r.mu.Lock()
	r.deadline = t
	r.mu.Unlock()
	return nil
}

// wait blocks until the deadline passes or Close.
func (r *racer) wait() error {
	for {
		r.mu.Lock()
		d := r.deadline
		r.mu.Unlock()
		if !d.IsZero() && !time.Now().Before(d) {
			return fmt.Errorf("fake read: %w", os.ErrDeadlineExceeded)
		}
		select {
		case <-r.closed:
			return fmt.Errorf("fake read: %w", net.ErrClosed)
		case <-time.After(time.Millisecond):
		}
	}
}

func (r *racer) Close() error { close(r.closed); return nil }

// racingConn is a udpio.Conn around a racer.
type racingConn struct{ *racer }

func (c racingConn) ReadBatch([]udpio.Message) (int, error)       { return 0, c.wait() }
func (c racingConn) WriteBatch(msgs []udpio.Message) (int, error) { return len(msgs), nil }
func (c racingConn) LocalAddr() netip.AddrPort                    { return netip.AddrPort{} }
func (c racingConn) RemoteAddr() netip.AddrPort                   { return netip.AddrPort{} }
func (c racingConn) Drops() (uint64, bool)                        { return 0, false }
func (c racingConn) Capabilities() udpio.Capabilities             { return udpio.Capabilities{} }

// racingStream is a net.Conn around a racer (not a *net.TCPConn, so a
// TCP receiver reads it with Read).
type racingStream struct{ *racer }

func (c racingStream) Read([]byte) (int, error)         { return 0, c.wait() }
func (c racingStream) Write(b []byte) (int, error)      { return len(b), nil }
func (c racingStream) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c racingStream) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c racingStream) SetDeadline(t time.Time) error    { return c.SetReadDeadline(t) }
func (c racingStream) SetWriteDeadline(time.Time) error { return nil }

// TestReceiveUDPCancelledBeforeItsDeadline: a cancellation that lands
// between ReceiveUDP's look at its context and its own SetReadDeadline
// still ends it, with no Idle and no Tick (a zero deadline) as with a
// Tick. Before, the loop's deadline replaced the past one the context's
// AfterFunc had just set, and a read with no deadline blocked until the
// socket closed (the reflect run, the iperf3 client and the own-socket
// reader wait on such a read).
func TestReceiveUDPCancelledBeforeItsDeadline(t *testing.T) {
	for _, cfg := range []engine.UDPReceiveConfig{{}, {Tick: time.Hour, OnTick: func(time.Time) bool { return true }}} {
		ctx, cancel := context.WithCancel(context.Background())
		conn := racingConn{newRacer(cancel)}
		done := make(chan error, 1)
		go func() { done <- engine.ReceiveUDP(ctx, conn, cfg, func(*udpio.Message) bool { return true }) }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("tick %v: ReceiveUDP returned %v; want nil when cancelled", cfg.Tick, err)
			}
		case <-time.After(hangGuard):
			conn.Close()
			<-done
			t.Errorf("tick %v: ReceiveUDP was still reading %v after its context was cancelled", cfg.Tick, hangGuard)
		}
	}
}

// TestReceiveUDPCancelStress cancels 1000 receivers on real loopback
// sockets, each at a different moment of its loop (the receivers get
// datagrams, so they go round it), with no idle or tick timeout: every
// one must end.
func TestReceiveUDPCancelStress(t *testing.T) {
	snd, rcv := loopPair(t, false)
	msgs := []udpio.Message{{Buf: make([]byte, 32)}}
	for i := range 1000 {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			var once sync.Once
			done <- engine.ReceiveUDP(ctx, rcv, engine.UDPReceiveConfig{Batch: 1, AfterRead: func(int) { once.Do(func() { close(started) }) }},
				func(*udpio.Message) bool { return true })
		}()
		if _, err := snd.WriteBatch(msgs); err != nil {
			t.Fatal(err)
		}
		<-started
		for range i % 4 {
			_, _ = snd.WriteBatch(msgs)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(hangGuard):
			t.Fatalf("receiver %d was still reading %v after its context was cancelled", i, hangGuard)
		}
	}
}

// TestReceiveTCPCancelledBeforeItsDeadline: a cancellation that lands
// between a TCP receiver's reads and its setting of the next read's
// deadline (the idle timeout, or a discarding reader's tick, or the
// clearing of one) still ends it. Before, that deadline replaced the
// AfterFunc's past one: the read waited out the idle timeout (here an
// hour), or, where the deadline was cleared, until the peer closed.
func TestReceiveTCPCancelledBeforeItsDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	conn := racingStream{newRacer(cancel)}
	done := make(chan error, 1)
	go func() {
		_, err := engine.ReceiveTCPWith(ctx, conn, engine.TCPReceiveConfig{BufSize: 1024, Idle: time.Hour}, new(stats.Counters))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ReceiveTCPWith returned %v; want nil when cancelled", err)
		}
	case <-time.After(hangGuard):
		conn.Close()
		<-done
		t.Errorf("ReceiveTCPWith was still reading %v after its context was cancelled", hangGuard)
	}
}
