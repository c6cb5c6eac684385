package iperf2

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/udpio"
)

// scriptConn is a udpio.Conn whose reads hand out a script of datagrams,
// one per read, then wait for their deadline (or Close) as a quiet socket
// does; writes are recorded.
type scriptConn struct {
	mu       sync.Mutex
	script   []udpio.Message
	deadline time.Time
	writes   int
	closed   chan struct{}
}

func (c *scriptConn) ReadBatch(msgs []udpio.Message) (int, error) {
	for {
		c.mu.Lock()
		if len(c.script) > 0 {
			m := c.script[0]
			c.script = c.script[1:]
			c.mu.Unlock()
			msgs[0].N = copy(msgs[0].Buf, m.Buf)
			msgs[0].Addr, msgs[0].Time, msgs[0].Arrived, msgs[0].Truncated = m.Addr, m.Time, m.Arrived, false
			return 1, nil
		}
		d := c.deadline
		c.mu.Unlock()
		if !d.IsZero() && !time.Now().Before(d) {
			return 0, fmt.Errorf("script read: %w", os.ErrDeadlineExceeded)
		}
		select {
		case <-c.closed:
			return 0, fmt.Errorf("script read: %w", net.ErrClosed)
		case <-time.After(time.Millisecond):
		}
	}
}

func (c *scriptConn) WriteBatch(msgs []udpio.Message) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes += len(msgs)
	return len(msgs), nil
}

func (c *scriptConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	return nil
}

func (c *scriptConn) LocalAddr() netip.AddrPort        { return netip.MustParseAddrPort("127.0.0.1:5001") }
func (c *scriptConn) RemoteAddr() netip.AddrPort       { return netip.AddrPort{} }
func (c *scriptConn) Drops() (uint64, bool)            { return 0, false }
func (c *scriptConn) Capabilities() udpio.Capabilities { return udpio.Capabilities{KernelRxTime: true} }
func (c *scriptConn) Close() error                     { close(c.closed); return nil }

// TestUDPTestSurvivesWallClockStep runs the server's UDP reader over a
// 6-second iperf2 UDP test, a datagram every 100 ms, whose receive stamps
// (the kernel's, wall clock) step 10 s ahead, or back, half way through,
// while the datagrams' arrivals on the monotonic clock run on evenly: the
// test ends by its FIN as one test with all its datagrams, and no log line
// says the reader read the FIN late. Before, the reader swept at the
// stamps and measured silence from them, so the step ahead ended the test
// on the idle timeout and its second half became a second test; the step
// back made the FIN look read 4 s after it arrived.
func TestUDPTestSurvivesWallClockStep(t *testing.T) {
	for _, step := range []time.Duration{10 * time.Second, -10 * time.Second} {
		t.Run(step.String(), func(t *testing.T) { clockStepRun(t, step) })
	}
}

func clockStepRun(t *testing.T, step time.Duration) {
	const n = 60
	base := time.Now() // monotonic
	wall := base.Round(0)
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	conn := &scriptConn{closed: make(chan struct{})}
	for i := int64(1); i <= n+1; i++ {
		if i == n/2 {
			wall = wall.Add(step)
		}
		id := i
		if i == n+1 {
			id = -i // the FIN
		}
		b := modernDatagram(id, 100, 5001)
		off := time.Duration(i) * 100 * time.Millisecond
		conn.script = append(conn.script, udpio.Message{Buf: b, Addr: src, Time: wall.Add(off), Arrived: base.Add(off)})
	}
	results := make(chan *result.Result, 4)
	var logMu sync.Mutex
	var logs []string
	cfg := session.ServerConfig{
		OnResult: func(_ int, r *result.Result) { results <- r },
		OnLog:    func(m string) { logMu.Lock(); logs = append(logs, m); logMu.Unlock() },
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss := session.NewTestServer(ctx, cfg, nil, conn, 5001)
	enable(ss)
	served := make(chan error, 1)
	go func() { served <- ss.ServeUDP(ctx) }()
	var r *result.Result
	select {
	case r = <-results:
	case <-time.After(time.Minute):
		t.Fatal("no result within a minute")
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("the reader ended with %v", err)
	}
	ss.WaitTests()
	close(results)
	for extra := range results {
		t.Errorf("a second result: %d packets, warnings %q", extra.Receiver.Packets, extra.Warnings)
	}
	// The FIN counts as a datagram, as iperf's own server counts it.
	if rv := r.Receiver; rv == nil || rv.Packets != n+1 || rv.Lost != 0 {
		t.Fatalf("receiver %+v; want all %d datagrams and the FIN, none lost", r.Receiver, n)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "idle") {
			t.Errorf("warning %q: the test ended on the idle timeout", w)
		}
	}
	logMu.Lock()
	for _, l := range logs {
		if strings.Contains(l, "behind") {
			t.Errorf("log %q: the FIN was read as it arrived", l)
		}
	}
	logMu.Unlock()
	// The test's duration and rate are read on the monotonic clock: the
	// first datagram to the FIN, 60 gaps of 100 ms. Before, they came
	// from the stamps: 16 s for the step ahead, -4 s for the step back.
	// Jitter compares with the sender's stamps, so the step shows in it.
	if math.Abs(r.Receiver.Seconds-6) > 1e-6 {
		t.Errorf("duration %.6f s, want the 6 s of the arrivals", r.Receiver.Seconds)
	}
	// 60 data datagrams over 59 gaps of 100 ms.
	if want := float64(n-1) / 5.9; math.Abs(r.Receiver.PacketsPerSecond-want) > 1e-6*want {
		t.Errorf("%.6f datagrams/s, want %.6f", r.Receiver.PacketsPerSecond, want)
	}
	t.Logf("duration %.3f s, %.3f datagrams/s, jitter %.1f ms", r.Receiver.Seconds, r.Receiver.PacketsPerSecond, r.Receiver.JitterMS)
}
