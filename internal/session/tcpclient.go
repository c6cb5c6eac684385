package session

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/stats"
)

// tcpStreamOutcome is one TCP stream's figures.
type tcpStreamOutcome struct {
	sent, recv       engine.TCPResult
	sendErr, recvErr error
	acked            int64 // bytes the server sent us unasked (CLIENTHDRACK)
}

func runTCPClient(ctx context.Context, cfg *ClientConfig, r *result.Result) (*result.Result, error) {
	conns := make([]net.Conn, cfg.Parallel)
	var d net.Dialer
	if cfg.Congestion != "" {
		d.Control = congestionControl(cfg.Congestion)
	}
	for i := range conns {
		c, err := d.DialContext(ctx, "tcp", cfg.addr())
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return nil, fmt.Errorf("connecting to %s: %w", cfg.addr(), err)
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	r.Test.Peer = conns[0].RemoteAddr().String()
	var back *connectBack
	if cfg.Tradeoff || cfg.Dual {
		server, _ := netip.ParseAddrPort(conns[0].RemoteAddr().String())
		var err error
		if back, err = listenConnectBack(ctx, cfg, server.Addr()); err != nil {
			return nil, err
		}
		defer back.close()
	}
	sendC := make([]*stats.Counters, cfg.Parallel)
	recvC := make([]*stats.Counters, cfg.Parallel)
	for i := range sendC {
		sendC[i], recvC[i] = new(stats.Counters), new(stats.Counters)
	}
	start := time.Now()
	var flows []*engine.Flow
	sending := !cfg.Reverse
	receiving := cfg.Reverse || cfg.FullDuplex
	if sending {
		name := ""
		if receiving || back != nil {
			name = "forward"
		}
		flows = append(flows, &engine.Flow{Name: name, Counters: sendC})
	}
	if receiving {
		name := ""
		if sending {
			name = "reverse"
		}
		flows = append(flows, &engine.Flow{Name: name, Counters: recvC})
	}
	iv := engine.NewIntervals(start, cfg.Interval, cfg.OnInterval, flows...)
	iv.Run(ctx)
	if back != nil {
		back.start(ctx, iv, cfg.Dual)
	}
	outs := make([]tcpStreamOutcome, cfg.Parallel)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = runTCPStream(ctx, cfg, c, sending, receiving, sendC[i], recvC[i])
		}()
	}
	wg.Wait()
	var backFlow *result.Flow
	if back != nil {
		backFlow = back.wait(ctx, cfg.Duration)
	}
	r.Intervals = iv.Stop(time.Now())
	fillTCPClientResult(r, cfg, outs, sending, receiving)
	warnInterrupted(ctx, r)
	if back != nil {
		r.Reverse = backFlow
		r.Warnings = append(r.Warnings, back.warnings...)
	}
	return r, nil
}

// runTCPStream runs one connection: header, then send and/or receive.
func runTCPStream(ctx context.Context, cfg *ClientConfig, c net.Conn, sending, receiving bool, sc, rc *stats.Counters) tcpStreamOutcome {
	var o tcpStreamOutcome
	hdr := cfg.header(false)
	buf := make([]byte, cfg.Length)
	fillPattern(buf)
	switch cfg.Dialect {
	case DialectIperf2Legacy:
		// 2.0.5 and lwiperf expect the 24-byte header again at the start
		// of every 128 KiB write.
		copy(buf, hdr)
	case DialectRaw:
		clear(buf[:min(4, len(buf))])
	}
	if len(hdr) > 0 {
		n, err := c.Write(hdr)
		sc.Bytes.Store(int64(n))
		if err != nil {
			o.sendErr = fmt.Errorf("sending the test header: %w", err)
			return o
		}
	}
	hdrBytes := int64(len(hdr))
	var wg sync.WaitGroup
	if receiving {
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit := cfg.Duration + 5*time.Second
			if cfg.Bytes > 0 {
				limit = 10 * time.Minute
			}
			rctx, cancel := context.WithTimeout(ctx, limit)
			defer cancel()
			o.recv, o.recvErr = engine.ReceiveTCP(rctx, c, 128<<10, 0, nil, rc)
		}()
	} else {
		// A 2.1 server may send a CLIENTHDRACK we never asked for: read
		// and count whatever comes so it cannot fill the window.
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, _ := io.Copy(io.Discard, c)
			o.acked = n
		}()
	}
	if sending {
		sres, err := engine.SendTCP(ctx, c, engine.TCPSendConfig{Buffer: buf, Duration: cfg.Duration, Bytes: cfg.Bytes, Counted: hdrBytes}, sc)
		sres.Bytes += hdrBytes
		o.sent, o.sendErr = sres, err
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}
	if !receiving {
		// The server closes after reading our FIN; don't wait for ever.
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	}
	wg.Wait()
	return o
}

// fillTCPClientResult sums the streams into the result.
func fillTCPClientResult(r *result.Result, cfg *ClientConfig, outs []tcpStreamOutcome, sending, receiving bool) {
	var snd result.Sender
	var rcv result.Receiver
	for i, o := range outs {
		st := result.Stream{ID: i + 1}
		if sending {
			s := &result.Sender{Bytes: o.sent.Bytes, Seconds: o.sent.End.Sub(o.sent.Start).Seconds()}
			rateOf(s)
			s.PacketsPerSecond = 0
			st.Sender = s
			snd.Bytes += s.Bytes
			snd.Seconds = max(snd.Seconds, s.Seconds)
		}
		if receiving {
			rr := &result.Receiver{Bytes: o.recv.Bytes, Seconds: o.recv.End.Sub(o.recv.Start).Seconds(), Source: "local"}
			if rr.Seconds > 0 {
				rr.BitsPerSecond = float64(rr.Bytes) * 8 / rr.Seconds
			}
			st.Receiver = rr
			sumReceiver(&rcv, rr)
			rcv.PacketsPerSecond = 0
		}
		for _, err := range []error{o.sendErr, o.recvErr} {
			if err != nil && r.Error == "" {
				r.Error = err.Error()
			}
		}
		if cfg.Parallel > 1 {
			r.Streams = append(r.Streams, st)
		}
	}
	if sending {
		if snd.Seconds > 0 {
			snd.BitsPerSecond = float64(snd.Bytes) * 8 / snd.Seconds
		}
		r.Sender = &snd
	}
	if receiving {
		r.Receiver = &rcv
		if rcv.Bytes == 0 {
			r.Warn("the server sent nothing back: does it support -R/--full-duplex (iperf 2.1 or later)?")
		}
	}
}
