package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/pacer"
	"github.com/wirebench/wirebench/internal/result"
)

// TCPCounts is what the TCP proxy did.
type TCPCounts = result.RelayTCPCounts

// tcpProxy forwards TCP connections to the target, delaying every chunk by
// delay and pacing the stream at rate bit/s (0: no limit), in both
// directions. Loss, reordering and the device stages do not apply to TCP.
type tcpProxy struct {
	ln     net.Listener
	to     string
	delay  time.Duration
	rate   float64
	onLog  func(string)
	counts struct {
		conns, failed, fwd, rev atomic.Int64
	}
	wg sync.WaitGroup
}

// serve accepts until ctx ends, then closes every connection.
func (p *tcpProxy) serve(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() { _ = p.ln.Close() })
	defer stop()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				break
			}
			p.onLog(fmt.Sprintf("relay: accepting TCP: %v", err))
			time.Sleep(10 * time.Millisecond)
			continue
		}
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.handle(ctx, c) }()
	}
	p.wg.Wait()
}

func (p *tcpProxy) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	up, err := d.DialContext(dctx, "tcp", p.to)
	cancel()
	if err != nil {
		p.counts.failed.Add(1)
		p.onLog(fmt.Sprintf("relay: TCP %s -> %s: %v", c.RemoteAddr(), p.to, err))
		return
	}
	defer up.Close()
	p.counts.conns.Add(1)
	stop := context.AfterFunc(ctx, func() { _ = c.Close(); _ = up.Close() })
	defer stop()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(ctx, up, c, &p.counts.fwd) }()
	go func() { defer wg.Done(); p.pipe(ctx, c, up, &p.counts.rev) }()
	wg.Wait()
}

type chunk struct {
	b  []byte
	at time.Time // when it may be written
}

// pipe copies src to dst: a reader stamps each chunk with its due time
// (arrival + delay, after the chunk before at the rate), a writer writes it
// then. When src ends, dst's write side is closed after the last chunk.
func (p *tcpProxy) pipe(ctx context.Context, dst, src net.Conn, n *atomic.Int64) {
	ch := make(chan chunk, 64) // bounds what the proxy buffers: 64 reads
	go func() {
		defer close(ch)
		var next time.Time
		for {
			b := make([]byte, 32*1024)
			k, err := src.Read(b)
			if k > 0 {
				at := time.Now().Add(p.delay)
				if p.rate > 0 {
					at = maxTime(at, next).Add(time.Duration(float64(k*8) / p.rate * float64(time.Second)))
					next = at
				}
				select {
				case ch <- chunk{b[:k], at}:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var clock pacer.SystemClock
	for c := range ch {
		if clock.Sleep(ctx, time.Until(c.at)) != nil {
			break
		}
		if _, err := dst.Write(c.b); err != nil {
			break
		}
		n.Add(int64(len(c.b)))
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	// Unblock and drain the reader if the writer stopped early.
	_ = src.SetReadDeadline(time.Now())
	for range ch {
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (p *tcpProxy) snapshot() *TCPCounts {
	return &TCPCounts{Connections: p.counts.conns.Load(), Failed: p.counts.failed.Load(),
		BytesForward: p.counts.fwd.Load(), BytesReverse: p.counts.rev.Load()}
}
