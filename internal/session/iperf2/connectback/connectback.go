// Package connectback is an iperf 2 client's listener for the legacy -r/-d
// connect-back, in which the server opens a new test (TCP or UDP) towards
// the client: only the server's own address is accepted, and what it sends
// is counted as the test's "reverse" flow.
package connectback

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
)

// Listener is a client's listener for the legacy -r/-d connect-back:
// the server opens a new test towards us. Only the server's own address is
// accepted.
type Listener struct {
	udp      bool
	ln       net.Listener
	uc       udpio.Conn
	allowed  netip.Addr
	length   int
	counters stats.Counters
	done     chan struct{}
	flow     *result.Flow
	warnings []string
	released time.Time
	port     int        // the port it listens on
	mu       sync.Mutex // guards released
	started  time.Time
	cancel   context.CancelFunc
}

// Listen opens the listener on cfg.ListenPort (-L) for the connect-back of
// a test against server, which our test reaches from local. When server
// is this host and that port is the test's own (the default), our own
// test would arrive at the listener (a UDP test, where the server holds
// only the TCP port: wirebench would measure itself) or the port is the
// server's: the listener takes a free port instead, and cfg.ListenPort
// says which, for the header that asks the server to connect back.
func Listen(ctx context.Context, cfg *session.ClientConfig, server, local netip.Addr) (*Listener, error) {
	b := &Listener{udp: cfg.UDP, allowed: server.Unmap(), length: cfg.Length, done: make(chan struct{})}
	port := cfg.ListenPort
	if port == cfg.Port && (server.IsLoopback() || server.Unmap() == local.Unmap()) {
		port = 0
	}
	addr := net.JoinHostPort("", strconv.Itoa(port))
	if server.Is4() || server.Is4In6() {
		addr = net.JoinHostPort("0.0.0.0", strconv.Itoa(port))
	}
	var err error
	if cfg.UDP {
		opt := session.UDPClientOptions()
		opt.GRO = !cfg.NoGRO
		if b.uc, err = udpio.Listen(ctx, "udp", addr, opt); err == nil {
			b.port = int(b.uc.LocalAddr().Port())
		}
	} else {
		// Stamped: data the server sends before Accept returns on a
		// busy host is timed from its arrival (engine.StampArrivals).
		lc := net.ListenConfig{Control: engine.StampArrivals(nil)}
		if b.ln, err = lc.Listen(ctx, "tcp", addr); err == nil {
			b.port = b.ln.Addr().(*net.TCPAddr).Port
		}
	}
	if err != nil {
		return nil, fmt.Errorf("listening on port %d for the server's connect-back (choose another with -L): %w", port, err)
	}
	cfg.ListenPort = b.port
	return b, nil
}

// Start begins accepting the connect-back and reports it as the "reverse"
// flow of iv.
func (b *Listener) Start(ctx context.Context, iv *engine.Intervals, dual bool) {
	b.started = time.Now()
	if dual {
		b.Release()
	}
	ctx, b.cancel = context.WithCancel(ctx)
	if b.udp {
		go b.serveUDP(ctx, iv)
		return
	}
	iv.AddFlow(&engine.Flow{Name: "reverse", Counters: []*stats.Counters{&b.counters}})
	go b.serveTCP(ctx)
}

// Release marks when the server may start sending (now).
func (b *Listener) Release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.released.IsZero() {
		b.released = time.Now()
	}
}

// Wait waits for the connect-back test to end: at most the test duration
// plus 5 s after release.
func (b *Listener) Wait(ctx context.Context, d time.Duration) *result.Flow {
	b.Release()
	b.mu.Lock()
	deadline := b.released.Add(d + 5*time.Second)
	b.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-b.done:
	case <-t.C:
		b.warnings = append(b.warnings, "the server's connect-back test did not finish in time; its counts are partial")
		b.cancel()
		<-b.done
	case <-ctx.Done():
		b.cancel()
		<-b.done
	}
	if b.flow == nil {
		b.warnings = append(b.warnings, "the server never connected back (-r/-d): is a firewall in the way, does the server not support it, or did its reverse-traffic policy refuse this client?")
	}
	return b.flow
}

// Close stops the listener and what it serves.
func (b *Listener) Close() {
	if b.cancel != nil {
		b.cancel()
	}
	if b.ln != nil {
		b.ln.Close()
	}
	if b.uc != nil {
		b.uc.Close()
	}
}

func (b *Listener) serveTCP(ctx context.Context) {
	defer close(b.done)
	stop := context.AfterFunc(ctx, func() { b.ln.Close() })
	defer stop()
	for {
		c, err := b.ln.Accept()
		accepted := time.Now() // the receive's start, or the first byte's arrival if that came before
		if err != nil {
			return
		}
		peer, _ := netip.ParseAddrPort(c.RemoteAddr().String())
		if peer.Addr().Unmap() != b.allowed {
			b.warnings = append(b.warnings, fmt.Sprintf("refused a connect-back from %s: only the server %s may connect back", peer, b.allowed))
			c.Close()
			continue
		}
		res, rerr := engine.ReceiveTCPWith(ctx, c, engine.TCPReceiveConfig{BufSize: session.DefaultTCPLength, Idle: 10 * time.Second, Since: accepted}, &b.counters)
		c.Close()
		rcv := &result.Receiver{Bytes: res.Bytes, Seconds: res.End.Sub(res.Start).Seconds(), Source: "local", FirstByteSeconds: res.FirstByteSeconds()}
		if rcv.Seconds > 0 {
			rcv.BitsPerSecond = float64(rcv.Bytes) * 8 / rcv.Seconds
		}
		b.flow = &result.Flow{Direction: result.DirReceive, Receiver: rcv, ListenPort: b.port}
		if rerr != nil {
			b.warnings = append(b.warnings, "connect-back stream: "+rerr.Error())
		}
		return
	}
}

func (b *Listener) serveUDP(ctx context.Context, iv *engine.Intervals) {
	defer close(b.done)
	var t *udpstream.Receiver
	var lingerUntil time.Time
	refused := 0
	lingering := func(now time.Time) bool { return lingerUntil.IsZero() || now.Before(lingerUntil) }
	publish := func() {
		if t != nil {
			t.Publish()
		}
	}
	cfg := engine.UDPReceiveConfig{Tick: 100 * time.Millisecond, OnTick: lingering, OnBatch: publish}
	err := engine.ReceiveUDP(ctx, b.uc, cfg, func(m *udpio.Message) bool {
		if m.Addr.Addr().Unmap() != b.allowed {
			refused++
			return true
		}
		buf := m.Buf[:m.N]
		if t == nil {
			t = udpstream.NewReceiver(m.Addr, buf, m.ArrivedAt())
			t.JitterMethod = session.JitterMethod(b.uc.Capabilities().GRO)
			iv.AddFlow(&engine.Flow{Name: "reverse", Counters: []*stats.Counters{t.Counters()}})
		}
		if reply := t.FeedArrived(buf, m.Time, m.ArrivedAt()); reply != nil {
			_, _ = b.uc.WriteBatch([]udpio.Message{{Buf: reply, Addr: m.Addr}})
			if lingerUntil.IsZero() {
				lingerUntil = time.Now().Add(300 * time.Millisecond)
			}
		}
		return lingering(time.Now())
	})
	if err != nil && !errors.Is(err, net.ErrClosed) {
		b.warnings = append(b.warnings, "connect-back socket: "+err.Error())
	}
	if refused > 0 {
		b.warnings = append(b.warnings, fmt.Sprintf("ignored %d datagrams on the connect-back port from hosts other than the server", refused))
	}
	if t != nil {
		t.EndIdle()
		b.flow = &result.Flow{Direction: result.DirReceive, Receiver: t.Summary(), ListenPort: b.port}
		b.warnings = append(b.warnings, t.Warnings()...)
	}
}

// Warnings are what the connect-back saw that the result should say; read
// them after Wait.
func (b *Listener) Warnings() []string { return b.warnings }
