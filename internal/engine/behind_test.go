package engine_test

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
)

// simClock is a pacer.Clock on simulated time: Sleep moves it on by the
// time asked plus oversleep (a thread that woke late), and stall, when set,
// adds a stretch in which the thread did not run to the sleep of that
// number.
type simClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps int
	stall  func(sleep int) time.Duration
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *simClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps++
	c.t = c.t.Add(max(d, 0))
	if c.stall != nil {
		c.t = c.t.Add(c.stall(c.sleeps))
	}
	return ctx.Err()
}

func (c *simClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// wireConn is a udpio.Conn in front of a link that carries one datagram
// per perDatagram: a send call returns once the link has taken the
// datagrams, as a send on a full socket buffer returns once this host's
// egress queue passed enough of them on (0: at once).
type wireConn struct {
	clock       *simClock
	perDatagram time.Duration
	sent        int
}

func (c *wireConn) WriteBatch(msgs []udpio.Message) (int, error) {
	c.clock.advance(time.Duration(len(msgs)) * c.perDatagram)
	c.sent += len(msgs)
	return len(msgs), nil
}

func (c *wireConn) ReadBatch([]udpio.Message) (int, error) { return 0, errors.New("not read") }
func (c *wireConn) SetReadDeadline(time.Time) error        { return nil }
func (c *wireConn) LocalAddr() netip.AddrPort              { return netip.AddrPort{} }
func (c *wireConn) RemoteAddr() netip.AddrPort             { return netip.AddrPort{} }
func (c *wireConn) Drops() (uint64, bool)                  { return 0, false }
func (c *wireConn) Capabilities() udpio.Capabilities       { return udpio.Capabilities{} }
func (c *wireConn) Close() error                           { return nil }

// TestBehindTellsQueueFromStall: a sender asked for 10,000 datagrams/s
// into a link that takes 9,570 (the send call waits for it) spends its time
// behind schedule inside the send call: QueueHeld. The same sender on a
// link that takes all it is given, but whose thread does not run for 30 ms
// every 100th sleep, is behind outside the send call: not QueueHeld, and
// the longest stall is the 30 ms (plus the datagram's interval at most).
// With neither, it is never behind.
func TestBehindTellsQueueFromStall(t *testing.T) {
	const pps = 10000
	for _, tc := range []struct {
		name        string
		perDatagram time.Duration
		stall       func(int) time.Duration
		held        bool
		wantStall   time.Duration
	}{
		{name: "slow link", perDatagram: time.Second / 9570, held: true},
		{name: "cpu stall", stall: func(n int) time.Duration {
			if n%100 == 0 {
				return 30 * time.Millisecond
			}
			return 0
		}, wantStall: 30 * time.Millisecond},
		{name: "on time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &simClock{t: time.Unix(1000, 0), stall: tc.stall}
			conn := &wireConn{clock: clock, perDatagram: tc.perDatagram}
			res, err := engine.SendUDP(context.Background(), conn, engine.UDPSendConfig{
				Template: make([]byte, 100), Stamp: func([]byte, int64, time.Time) {},
				PPS: pps, Duration: 2 * time.Second, Clock: clock,
			}, &stats.Counters{})
			if err != nil {
				t.Fatal(err)
			}
			b, span := res.Behind, res.End.Sub(res.Start)
			t.Logf("%d datagrams in %v (%.0f/s); behind in send %v, outside %v, longest outside %v; max lag %v",
				res.Packets, span, float64(res.Packets)/span.Seconds(), b.InSend, b.Stalled, b.MaxStall, res.MaxLag)
			deficit := span - time.Duration(float64(res.Packets)/pps*float64(time.Second))
			if got := b.QueueHeld(span, deficit); got != tc.held {
				t.Errorf("QueueHeld = %v, want %v", got, tc.held)
			}
			switch {
			case tc.held && (b.HeldRate() < 9570*0.998 || b.HeldRate() > 9570*1.002):
				t.Errorf("held rate %.1f datagrams/s, want the link's 9570", b.HeldRate())
			case tc.held && b.InSend < span*9/10:
				t.Errorf("a sender the link held back for the whole test was behind in send calls only %v of %v", b.InSend, span)
			case tc.stall != nil && (b.MaxStall < tc.wantStall || b.MaxStall > tc.wantStall+time.Second/pps):
				t.Errorf("longest stall %v, want %v (+ one interval at most)", b.MaxStall, tc.wantStall)
			case tc.stall != nil && b.Stalled < 19*tc.wantStall:
				t.Errorf("stalled %v in all, want at least 19 stalls of %v", b.Stalled, tc.wantStall)
			case !tc.held && tc.stall == nil && (b.InSend != 0 || b.Stalled != 0):
				t.Errorf("a sender on time was behind: %+v", b)
			}
		})
	}
}
