package standin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// TCPServerOptions configures the TCP stand-in servers.
type TCPServerOptions struct {
	// Idle aborts a connection that sends nothing for this long (lwiperf:
	// 10 s, its default here; TCPSink: 0 = wait for the context).
	Idle time.Duration
	// NoConnectBack makes the lwiperf server ignore VERSION1.
	NoConnectBack bool
}

// LwiperfServerResult is what the lwiperf stand-in server observed.
type LwiperfServerResult struct {
	Peer         net.Addr
	Header       ClientHdrV1 // the settings taken from the first 24 bytes
	HeaderBytes  []byte
	FirstReadLen int   // length of the first read (informational, see below)
	Bytes        int64 // lwiperf's bytes_transferred: every byte read
	Checks       int   // header re-checks at 128 KiB boundaries that passed

	Aborted     bool   // lwiperf closed the session with a data error
	AbortReason string // why
	AbortOffset int64  // stream offset of the failed check

	// Connect-back (VERSION1): where lwiperf connected, what it sent.
	CallbackAddr  string
	CallbackBytes int64
	CallbackHead  []byte // first 48 bytes: the header twice, flags 0
	CallbackErr   error
}

// LwiperfTCPServer starts an lwIP lwiperf TCP server on addr and serves one
// connection (§5.2, [S] lwiperf.c lwiperf_tcp_recv):
//
//   - The first 24 bytes are taken as client_hdr_v1. If the stream ends
//     before 24 bytes the session is aborted (lwiperf: first pbuf < 24).
//   - Header checks happen at stream offsets 24, 24+128 KiB, 24+2·128 KiB, …
//     lwiperf checks only when a pbuf starts exactly at such an offset. A
//     TCP stream hides pbuf boundaries, so this stand-in checks every
//     boundary, as if a pbuf started at each: it accepts a stream only if a
//     real lwiperf would accept it however the stream was segmented. It
//     also assumes the first 24 bytes arrived as a pbuf of their own (a real
//     lwiperf drops, uncounted, whatever else the first pbuf holds).
//   - At a boundary, fewer than 24 bytes before EOF aborts (pbuf < 24);
//     with VERSION1 the 24 bytes must equal the header, else abort.
//   - Abort closes the connection. Bytes counts every byte read (headers
//     included), as bytes_transferred does.
//   - VERSION1: connect back to peer_ip:mPort at once with RUN_NOW, or at
//     EOF without it; the reverse stream sends the header with flags 0
//     twice, then the digit pattern, for −mAmount×10 ms (a byte amount ends
//     at once, as lwiperf's client does).
func LwiperfTCPServer(ctx context.Context, addr string, o TCPServerOptions) (*Server[LwiperfServerResult], error) {
	if o.Idle == 0 {
		o.Idle = 10 * time.Second
	}
	return listenTCP(ctx, addr, "lwiperf", func(conn net.Conn) (LwiperfServerResult, error) {
		return serveLwiperf(ctx, conn, o)
	})
}

func listenTCP[T any](ctx context.Context, addr, name string, serve func(net.Conn) (T, error)) (*Server[T], error) {
	if _, err := needDeadline(ctx); err != nil {
		return nil, fmt.Errorf("%s server: %w", name, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s server: listen %s: %w", name, addr, err)
	}
	return startServer(ln.Addr(), func() (T, error) {
		var zero T
		stop := closeOnDone(ctx, ln)
		conn, err := ln.Accept()
		stop()
		_ = ln.Close()
		if err != nil {
			return zero, fmt.Errorf("%s server: accept: %w", name, err)
		}
		defer conn.Close()
		defer closeOnDone(ctx, conn)()
		res, err := serve(conn)
		if err != nil {
			return res, fmt.Errorf("%s server: %w", name, err)
		}
		return res, nil
	}), nil
}

// lwiperfRx is the receive state machine of serveLwiperf.
type lwiperfRx struct {
	res     *LwiperfServerResult
	nextB   int64  // next boundary where 24 header bytes are expected
	hdr     []byte // header bytes gathered at the current boundary
	settled bool   // the settings (first header) are known
}

// feed consumes p; it returns false once the session is aborted.
func (r *lwiperfRx) feed(p []byte) bool {
	for len(p) > 0 {
		at := r.res.Bytes
		if at == r.nextB || len(r.hdr) > 0 {
			k := min(clientHdrV1Len-len(r.hdr), len(p))
			r.hdr = append(r.hdr, p[:k]...)
			p = p[k:]
			r.res.Bytes += int64(k)
			if len(r.hdr) == clientHdrV1Len && !r.boundary() {
				return false
			}
			continue
		}
		k := int(min(int64(len(p)), r.nextB-at))
		p = p[k:]
		r.res.Bytes += int64(k)
	}
	return true
}

// boundary handles 24 complete header bytes at r.nextB.
func (r *lwiperfRx) boundary() bool {
	b := r.nextB
	h := r.hdr
	r.hdr = nil
	if !r.settled {
		r.settled = true
		r.res.HeaderBytes = h
		r.res.Header, _ = ParseClientHdrV1(h)
		r.nextB = clientHdrV1Len
		return true
	}
	if b == clientHdrV1Len {
		r.nextB = clientHdrV1Len + tcpChunk
	} else {
		r.nextB = b + tcpChunk
	}
	if r.res.Header.Flags&flagVersion1 != 0 && !bytes.Equal(h, r.res.HeaderBytes) {
		r.abort(b, "header at 128 KiB boundary differs from the first header")
		return false
	}
	r.res.Checks++
	return true
}

func (r *lwiperfRx) abort(off int64, why string) {
	r.res.Aborted, r.res.AbortOffset, r.res.AbortReason = true, off, why
}

func serveLwiperf(ctx context.Context, conn net.Conn, o TCPServerOptions) (LwiperfServerResult, error) {
	res := &LwiperfServerResult{Peer: conn.RemoteAddr()}
	var back chan struct{}
	err := lwiperfReceive(ctx, conn, o, res, &back)
	if back != nil {
		<-back // the connect-back writes into res
	}
	return *res, err
}

// lwiperfReceive runs the receive side; *back is set when a connect-back
// has been started.
func lwiperfReceive(ctx context.Context, conn net.Conn, o TCPServerOptions, res *LwiperfServerResult, back *chan struct{}) error {
	rx := &lwiperfRx{res: res}
	buf := make([]byte, 64*1024)
	for reads := 0; ; reads++ {
		_ = conn.SetReadDeadline(time.Now().Add(o.Idle))
		n, err := conn.Read(buf)
		if reads == 0 {
			res.FirstReadLen = n
		}
		if !rx.feed(buf[:n]) {
			_ = conn.Close() // abort
			return nil
		}
		dual := res.Header.Flags&(flagVersion1|flagRunNow) == flagVersion1|flagRunNow
		if *back == nil && rx.settled && dual && !o.NoConnectBack {
			*back = lwiperfConnectBack(ctx, conn, res) // dual: at once
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rx.abort(res.Bytes, "idle or read error: "+err.Error())
			_ = conn.Close()
			return nil
		}
	}
	if !rx.settled || len(rx.hdr) > 0 {
		rx.abort(res.Bytes-int64(len(rx.hdr)), "pbuf shorter than 24 bytes at a header position")
		return nil
	}
	if *back == nil && res.Header.Flags&flagVersion1 != 0 && !o.NoConnectBack {
		*back = lwiperfConnectBack(ctx, conn, res) // tradeoff: at EOF
	}
	return nil
}

// lwiperfConnectBack runs lwiperf_tx_start_passive: connect to
// peer_ip:mPort and send header(flags 0)×2 + pattern for the amount.
func lwiperfConnectBack(ctx context.Context, conn net.Conn, res *LwiperfServerResult) chan struct{} {
	done := make(chan struct{})
	h := res.Header
	h.Flags = 0
	res.CallbackAddr = net.JoinHostPort(remoteIP(conn), strconv.Itoa(int(uint16(h.MPort))))
	go func() {
		defer close(done)
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", res.CallbackAddr)
		if err != nil {
			res.CallbackErr = fmt.Errorf("connect back: %w", err)
			return
		}
		defer c.Close()
		defer closeOnDone(ctx, c)()
		if h.Amount >= 0 {
			return // byte-limited: lwiperf's client closes at once [S]
		}
		end := time.Now().Add(time.Duration(-int64(h.Amount)) * 10 * time.Millisecond)
		hb := h.Bytes()
		stream := append(append([]byte(nil), hb...), hb...)
		res.CallbackHead = stream
		chunk := make([]byte, 1460)
		for i := 0; i < defaultMaxPkts && time.Now().Before(end) && ctx.Err() == nil; i++ {
			if i > 0 {
				digitPattern(chunk, int(res.CallbackBytes%10))
				stream = chunk
			}
			_ = c.SetWriteDeadline(end.Add(time.Second))
			n, err := c.Write(stream)
			res.CallbackBytes += int64(n)
			if err != nil {
				res.CallbackErr = fmt.Errorf("connect back: write: %w", err)
				return
			}
		}
	}()
	return done
}

// SinkResult is what TCPSink counted.
type SinkResult struct {
	Peer      net.Addr
	Bytes     int64
	FirstRead []byte // the first up-to-128 bytes received
	Duration  time.Duration
}

// TCPSink starts a plain TCP receiver on addr, as the zperf and ESP-IDF
// servers are (§5.1, §5.3): it accepts one connection, counts bytes until
// EOF and sends nothing back.
func TCPSink(ctx context.Context, addr string, o TCPServerOptions) (*Server[SinkResult], error) {
	return listenTCP(ctx, addr, "tcp sink", func(conn net.Conn) (SinkResult, error) {
		res := SinkResult{Peer: conn.RemoteAddr()}
		start := time.Now()
		var r io.Reader = conn
		if o.Idle > 0 {
			r = idleReader{conn, o.Idle}
		}
		n, head, err := countStream(r, 128)
		res.Bytes, res.FirstRead, res.Duration = n, head, time.Since(start)
		if err != nil && ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, err
	})
}

// idleReader sets a fresh read deadline before each read.
type idleReader struct {
	c    net.Conn
	idle time.Duration
}

func (r idleReader) Read(p []byte) (int, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(r.idle))
	return r.c.Read(p)
}
