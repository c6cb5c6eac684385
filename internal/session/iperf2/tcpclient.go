package iperf2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2/connectback"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/units"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// resetByPeer reports whether err is the peer resetting the connection.
func resetByPeer(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// atOnce is how soon after the start a peer's reset or close counts as
// "at once": an iperf3 server resets an iperf 2 test once it has read as
// much of our data as the "parameters length" our header gave it, some
// tenths of a second on an idle loopback (0.3-0.8 s seen), 2.85 s on a
// loaded machine; 5 s leaves room for that.
const atOnce = 5 * time.Second

// endedAtOnce is the error of a TCP test the peer reset or closed at once
// (how: "reset" or "closed"), after bytes of its data arrived.
func endedAtOnce(how string, after time.Duration, bytes int64, cause error) string {
	msg := fmt.Sprintf("the peer %s the connection at once (%.2f s into the test", how, after.Seconds())
	if how == "closed" {
		msg += fmt.Sprintf(", after %d bytes", bytes)
	}
	msg += "): " + session.Iperf3Hint
	if cause != nil {
		msg += " (" + cause.Error() + ")"
	}
	return msg
}

// stateBytesOnly: a timed test in which fewer bytes than this arrived got
// no test data at all, only what an iperf3 server sends before its
// parameters (one state byte).
const stateBytesOnly = 16

// tcpStreamOutcome is one TCP stream's figures.
type tcpStreamOutcome struct {
	sent    session.TCPSent
	recv    engine.TCPResult
	recvErr error
	// recvEnded is when the receive ended, from the test's start;
	// recvEOF is set when it ended because the peer closed in time.
	recvEnded time.Duration
	recvEOF   bool
	// recvStopped is set when the test was stopped (ctx ended) first.
	recvStopped bool
	// report is the wirebench server's count, when it sent one.
	report   i2wire.TCPReport
	reported bool
}

func runTCPClient(ctx context.Context, cfg *session.ClientConfig, r *result.Result) (*result.Result, error) {
	conns := make([]net.Conn, cfg.Parallel)
	for i := range conns {
		c, err := cfg.DialTCP(ctx, i)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return nil, err
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	r.Test.Peer = conns[0].RemoteAddr().String()
	cfg.Connected(conns[0].LocalAddr(), r.Test.Peer)
	cfg.RecordSocket(r, conns[0], nil)
	var back *connectback.Listener
	if cfg.Tradeoff || cfg.Dual {
		server, _ := netip.ParseAddrPort(conns[0].RemoteAddr().String())
		local, _ := netip.ParseAddrPort(conns[0].LocalAddr().String())
		var err error
		if back, err = connectback.Listen(ctx, cfg, server.Addr(), local.Addr()); err != nil {
			return nil, err
		}
		defer back.Close()
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
		flows = append(flows, &engine.Flow{Name: name, Counters: sendC, TCP: conns, Sender: true})
	}
	if receiving {
		name := ""
		if sending {
			name = "reverse"
		}
		flows = append(flows, &engine.Flow{Name: name, Counters: recvC})
	}
	iv := engine.NewIntervals(start, cfg.Interval, cfg.OnInterval, flows...)
	iv.SetOmit(cfg.Omit)
	if back == nil && cfg.Bytes == 0 && cfg.Duration > 0 {
		// The last row is Stop's, once the streams are done: no row is
		// printed at the test's end while bytes are still counted.
		iv.SetEnd(cfg.Duration)
	}
	iv.Run(ctx)
	if back != nil {
		back.Start(ctx, iv, cfg.Dual)
	}
	outs := make([]tcpStreamOutcome, cfg.Parallel)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = runTCPStream(ctx, cfg, c, start, sending, receiving, sendC[i], recvC[i])
		}()
	}
	wg.Wait()
	var backFlow *result.Flow
	if back != nil {
		backFlow = back.Wait(ctx, cfg.Duration)
	}
	end := time.Now()
	if back == nil {
		// The intervals end when the counting did, not after the wait
		// for the server's count that follows it.
		end = countingEnd(outs, end)
	}
	r.Intervals = iv.Stop(end)
	fillTCPClientResult(r, cfg, outs, sending, receiving)
	session.WarnInterrupted(ctx, r)
	if back != nil {
		r.AddReverse(backFlow, back.Warnings())
	}
	if back != nil && backFlow == nil && resetAny(outs) {
		r.Error = reverseRefused("the server reset the connection at once and never connected back (an iperf3 server "+
			"resets every iperf 2 test: if it is iperf3, use --dialect iperf3)", conns[0].LocalAddr()) + " (" + r.Error + ")"
	}
	return r, nil
}

// closedAtOnce reports whether the peer closed a stream we receive on at
// once in a timed test (a -n test ends when the peer has sent its bytes).
func closedAtOnce(cfg *session.ClientConfig, o tcpStreamOutcome) bool {
	return o.recvEOF && cfg.Bytes == 0 && cfg.Duration > 0 && o.recvEnded < min(atOnce, cfg.Duration/2)
}

// countingEnd is when the streams' counting ended: their last write (or,
// receiving, the last read), or fallback when none says.
func countingEnd(outs []tcpStreamOutcome, fallback time.Time) time.Time {
	var ends []time.Time
	for _, o := range outs {
		ends = append(ends, o.sent.Res.End, o.recv.End)
	}
	return countedUntil(fallback, ends...)
}

// resetAny reports whether the peer reset any of the streams.
func resetAny(outs []tcpStreamOutcome) bool {
	for _, o := range outs {
		if resetByPeer(o.sent.Err) || resetByPeer(o.recvErr) {
			return true
		}
	}
	return false
}

// runTCPStream runs one connection: header, then send and/or receive. Its
// writes end with the test's clock, which started at start.
func runTCPStream(ctx context.Context, cfg *session.ClientConfig, c net.Conn, start time.Time, sending, receiving bool, sc, rc *stats.Counters) tcpStreamOutcome {
	var o tcpStreamOutcome
	hdr := header(cfg, false)
	buf := make([]byte, cfg.Length)
	session.FillPattern(buf)
	switch cfg.Dialect {
	case session.DialectIperf2Legacy:
		// 2.0.5 and lwiperf expect the 24-byte header again at the start
		// of every 128 KiB write.
		copy(buf, hdr)
	case session.DialectRaw:
		clear(buf[:min(4, len(buf))])
	}
	// Nothing the peer sends back can arrive before it has our header.
	asked := time.Now()
	if len(hdr) > 0 {
		n, err := c.Write(hdr)
		sc.Bytes.Store(int64(n))
		if err != nil {
			o.sent.Err = fmt.Errorf("sending the test header: %w", err)
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
			o.recv, o.recvErr = engine.ReceiveTCPWith(rctx, c, engine.TCPReceiveConfig{BufSize: 128 << 10, Since: asked}, rc)
			o.recvEnded = time.Since(start)
			o.recvStopped = ctx.Err() != nil
			o.recvEOF = o.recvErr == nil && !o.recvStopped
		}()
	} else {
		// A 2.1 server may send a CLIENTHDRACK we never asked for, and a
		// wirebench server its count after our FIN: keep the first bytes
		// (a reply is 80 at most) and read the rest so it cannot fill
		// the window.
		wg.Add(1)
		go func() {
			defer wg.Done()
			reply, _ := io.ReadAll(io.LimitReader(c, 256))
			_, _ = io.Copy(io.Discard, c)
			if asksTCPReport(cfg) {
				o.report, o.reported = i2wire.ParseTCPReply(reply)
			}
		}()
	}
	if sending {
		scfg := engine.TCPSendConfig{Buffer: buf, Duration: cfg.Duration, Bytes: cfg.Bytes, Counted: hdrBytes}
		// With two or more streams, blocking writes let the kernel keep
		// each stream's sender and receiver on one core (bench/README.md:
		// 1.2x on loopback with -P 2; with one stream they lost). Only
		// the reply reader above shares the socket, and it tolerates it.
		scfg.Blocking = cfg.Parallel >= 2 && !receiving
		if cfg.Duration > 0 {
			scfg.End = start.Add(cfg.Duration)
		}
		o.sent = session.SendTCPDelivered(ctx, c, cfg.ZeroCopy, scfg, sc, true, nil, engine.DrainOptions{})
	}
	if !receiving {
		// The server closes after reading our FIN (and sending its
		// count); don't wait for ever.
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	}
	wg.Wait()
	return o
}

// fillTCPClientResult sums the streams into the result.
func fillTCPClientResult(r *result.Result, cfg *session.ClientConfig, outs []tcpStreamOutcome, sending, receiving bool) {
	var snd result.Sender
	var rcv result.Receiver
	reports := 0
	for i, o := range outs {
		st := result.Stream{ID: i + 1}
		if sending {
			st.Sender = o.sent.Sender()
			session.AddSender(&snd, st.Sender)
			session.WarnDelivery(r, o.sent)
		}
		var rr *result.Receiver
		switch {
		case receiving:
			rr = &result.Receiver{Bytes: o.recv.Bytes, Seconds: o.recv.End.Sub(o.recv.Start).Seconds(), Source: "local", FirstByteSeconds: o.recv.FirstByteSeconds()}
		case o.reported:
			rr = &result.Receiver{Bytes: o.report.Bytes, Seconds: o.report.Elapsed.Seconds(), Source: "peer-report"}
			reports++
		}
		if rr != nil {
			if rr.Seconds > 0 {
				rr.BitsPerSecond = float64(rr.Bytes) * 8 / rr.Seconds
			}
			st.Receiver = rr
			session.SumReceiver(&rcv, rr)
			rcv.PacketsPerSecond = 0
		}
		for _, e := range []struct {
			err error
			ran engine.TCPResult
		}{{o.sent.Err, o.sent.Res}, {o.recvErr, o.recv}} {
			if e.err != nil && r.Error == "" {
				r.Error = e.err.Error()
				if resetByPeer(e.err) && !cfg.Tradeoff && !cfg.Dual { // -r/-d: see runTCPClient
					// The time is that of the direction whose error it
					// is (a receive-only test never started a send).
					in := max(e.ran.End.Sub(e.ran.Start), 0)
					if in < atOnce {
						r.Error = endedAtOnce("reset", in, 0, e.err)
						continue
					}
					r.Warn(fmt.Sprintf("the peer reset the connection %.2f s into the test: a listener that is not an "+
						"iperf 2 server does that (an iperf3 server resets iperf2 tests); if it is iperf3, use --dialect iperf3",
						in.Seconds()))
				}
			}
		}
		switch {
		case !receiving || r.Error != "":
		case closedAtOnce(cfg, o):
			r.Error = endedAtOnce("closed", o.recvEnded, o.recv.Bytes, nil)
		case o.recv.Bytes > 0 && o.recv.Bytes < stateBytesOnly && cfg.Bytes == 0 && !o.recvStopped:
			r.Error = fmt.Sprintf("the peer sent only %s in the whole test: %s (an iperf3 server sends one "+
				"state byte and waits for parameters that never come)", units.Plural(o.recv.Bytes, "byte"), session.Iperf3Hint)
		}
		if cfg.Parallel > 1 {
			r.Streams = append(r.Streams, st)
		}
	}
	if sending {
		session.SettleWritten(&snd)
		r.Sender = &snd
	}
	switch {
	case !receiving && reports == len(outs) && reports > 0:
		r.Receiver = &rcv
	case !receiving && reports > 0:
		r.Warn(fmt.Sprintf("the server reported its count for %d of %d streams: no receiver figure", reports, len(outs)))
	}
	if receiving {
		r.Receiver = &rcv
		if rcv.Bytes == 0 {
			r.Warn("the server sent nothing back: does it support -R/--full-duplex (iperf 2.1 or later)?")
		}
	}
}
