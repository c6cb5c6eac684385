package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
)

// refusingConn is a udpio.Conn whose every write fails with err, as a
// firewall's EPERM fails every sendmsg, until accept is set.
type refusingConn struct {
	err    error
	mu     sync.Mutex
	writes int
	accept func(write int) bool // nil: refuse every write
}

func (c *refusingConn) WriteBatch(msgs []udpio.Message) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	if c.accept != nil && c.accept(c.writes) {
		return len(msgs), nil
	}
	return 0, fmt.Errorf("udpio: sendmmsg (0 of %d sent): %w", len(msgs), c.err)
}

func (c *refusingConn) ReadBatch([]udpio.Message) (int, error) { return 0, errors.New("not read") }
func (c *refusingConn) SetReadDeadline(time.Time) error        { return nil }
func (c *refusingConn) LocalAddr() netip.AddrPort              { return netip.AddrPort{} }
func (c *refusingConn) RemoteAddr() netip.AddrPort             { return netip.AddrPort{} }
func (c *refusingConn) Drops() (uint64, bool)                  { return 0, false }
func (c *refusingConn) Capabilities() udpio.Capabilities       { return udpio.Capabilities{} }
func (c *refusingConn) Close() error                           { return nil }

// tickClock is a pacer.Clock whose every reading is 50 µs after the one
// before, and whose Sleep moves it on at once: an unpaced sender,
// which never sleeps, still sees time pass.
type tickClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tickClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(50 * time.Microsecond)
	return c.t
}

func (c *tickClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.t = c.t.Add(d)
	}
	return ctx.Err()
}

// TestSendUDPEndsWhenEveryWriteIsRefused: a send bounded by a byte count
// (-n, -k, RFC 2544's bursts) whose every datagram the host refuses (a
// firewall's EPERM, ENETUNREACH) ends with an error naming the refusal
// once RefusedFor passed with nothing sent, paced or not; so does a send
// bounded by a duration longer than that. Before, only ECONNREFUSED ended
// a send, and one with a byte count spun until it was cancelled.
func TestSendUDPEndsWhenEveryWriteIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		pps      float64
		bytes    int64
		duration time.Duration
	}{
		{"bytes unpaced EPERM", syscall.EPERM, 0, 1 << 20, 0},
		{"bytes paced ENETUNREACH", syscall.ENETUNREACH, 1000, 1 << 20, 0},
		{"duration paced EPERM", syscall.EPERM, 1000, 0, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := &refusingConn{err: tc.err}
			clock := &tickClock{t: time.Unix(1000, 0)}
			var c stats.Counters
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound for the old code only
			defer cancel()
			res, err := engine.SendUDP(ctx, conn, engine.UDPSendConfig{
				Template: make([]byte, 100), Stamp: stampID, PPS: tc.pps, Bytes: tc.bytes, Duration: tc.duration, Clock: clock,
			}, &c)
			if ctx.Err() != nil {
				t.Fatalf("the send ran until cancelled (%d writes)", conn.writes)
			}
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), "refused every datagram") {
				t.Fatalf("error %v; want one saying every datagram was refused, wrapping %v", err, tc.err)
			}
			if res.Packets != 0 || res.Errors == 0 || c.Errors.Load() != res.Errors || !errors.Is(res.LastErr, tc.err) {
				t.Errorf("sent %d, %d refused (counters %d), last error %v; want 0 sent and the refusals counted", res.Packets, res.Errors, c.Errors.Load(), res.LastErr)
			}
			if took := res.End.Sub(res.Start); took < engine.RefusedFor || took > engine.RefusedFor+10*time.Millisecond {
				t.Errorf("the send took %v of its clock; want %v of refusals", took, engine.RefusedFor)
			}
		})
	}
}

// TestSendUDPGoesOnThroughBriefRefusals: writes that fail now and then,
// with datagrams accepted between them, never end a send: it sends its
// whole byte count and counts the refusals.
func TestSendUDPGoesOnThroughBriefRefusals(t *testing.T) {
	conn := &refusingConn{err: syscall.ENOBUFS, accept: func(w int) bool { return w%50 == 0 }}
	clock := &tickClock{t: time.Unix(1000, 0)}
	var c stats.Counters
	res, err := engine.SendUDP(context.Background(), conn, engine.UDPSendConfig{
		Template: make([]byte, 100), Stamp: stampID, PPS: 100, Bytes: 100 * 100, Clock: clock, Batch: 1,
	}, &c)
	if err != nil || res.Packets != 100 || res.Errors != 49*100 {
		t.Fatalf("sent %d with %d refused, error %v; want 100 sent, 4,900 refused and no error", res.Packets, res.Errors, err)
	}
	if span := res.End.Sub(res.Start); span < 49*time.Second {
		t.Errorf("the send took %v of its clock; want the 50 s its 5,000 paced writes take", span)
	}
}
