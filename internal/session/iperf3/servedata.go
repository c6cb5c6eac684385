package iperf3

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// runData moves the data until the client's TEST_END (or a failure), and
// fills sv.r; the test's clock started at start. It returns the control
// message that ended the data phase.
func (sv *i3ServerTest) runData(ctx context.Context, start time.Time, msgs chan ctrlMsg) (ctrlMsg, error) {
	t, h, p := sv.t, sv.t.hub, sv.t.p
	sv.start = start
	sv.r = sv.newResult()
	if sv.quiet = p.WB != nil && p.WB.Probe; sv.quiet {
		sv.id = h.s.QuietTest()
	} else {
		sv.id = h.s.NewTest(sv.r)
	}
	session.Hook("iperf3-test", t.peer)
	// The client's -O: the first seconds are shown, marked, and left out
	// of the summary; the client runs them before its -t.
	omit := time.Duration(p.Omit) * time.Second
	backstop := h.s.Config().MaxDuration
	if p.Time > 0 {
		backstop = min(backstop, time.Duration(p.Time)*time.Second+omit)
	}
	backstop += 30 * time.Second
	ivCtx, ivEnd := context.WithCancel(ctx) // ends the reports should this test panic before Stop
	defer ivEnd()
	rep := sv.startIntervals(ivCtx, omit, backstop)

	sctx, stopSend := context.WithCancel(ctx)
	defer stopSend()
	rctx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	var wg sync.WaitGroup
	sv.startStreams(sctx, rctx, &wg, len(rep.sendC) > 0, backstop)
	m, err := sv.awaitEnd(ctx, msgs, backstop, rep.allC)
	stopSend()
	if err == nil {
		// What the client sent before TEST_END may still be on its way or
		// in our socket buffers: count it (iperf3's own server stops at
		// TEST_END and misses it).
		drain(ctx, rep.recvC, rep.recvTCP)
	}
	sv.end = time.Now()
	stopRecv()
	for _, st := range t.streams {
		if st.urx != nil {
			st.totals = st.urx.stop()
		}
	}
	// iperf3 closes the data connections at TEST_END.
	h.closeStreams(t)
	wg.Wait()
	sv.r.Intervals = rep.iv.Stop(sv.end)
	sv.perIv = rep.per.Stop(sv.end)
	sv.omitted = session.StreamOmits(rep.iv, omit, rep.ids, rep.allC)
	sv.fill()
	session.ApplyOmit(sv.r, omit, sv.omitted, true)
	if err != nil {
		sv.r.Error = err.Error()
		sv.finish()
	}
	return m, err
}

// serverReports are the server's running interval reports: the test's
// (iv) and the per-stream ones of the wirebench extension (per), with the
// streams they count.
type serverReports struct {
	iv, per            *engine.Intervals
	recvC, sendC, allC []*stats.Counters
	recvTCP            []net.Conn
	ids                []int64
}

// startIntervals starts the interval reports of the test and of each
// stream, on ctx; omit is the client's -O, backstop the longest the test
// may run.
func (sv *i3ServerTest) startIntervals(ctx context.Context, omit, backstop time.Duration) serverReports {
	t, h, p := sv.t, sv.t.hub, sv.t.p
	var rep serverReports
	for _, st := range t.streams {
		if st.send {
			rep.sendC = append(rep.sendC, st.counters())
		} else {
			rep.recvC = append(rep.recvC, st.counters())
			if st.tcp != nil {
				rep.recvTCP = append(rep.recvTCP, st.tcp)
			}
		}
		rep.allC, rep.ids = append(rep.allC, st.counters()), append(rep.ids, st.id)
	}
	onIv := h.s.Interval(sv.id)
	if sv.quiet {
		onIv = nil
	}
	rep.iv = engine.NewIntervals(sv.start, h.s.Config().Interval, onIv, directionFlows(rep.recvC, rep.sendC, false)...)
	rep.iv.SetOmit(omit)
	rep.per = engine.NewIntervals(sv.start, sv.wbPeriod(backstop), nil, i3Flows(rep.ids, rep.allC)...)
	rep.per.SetOmit(omit)
	if p.Time > 0 && p.Num == 0 && p.BlockCount == 0 {
		// The last row is Stop's, at TEST_END: no row is printed at the
		// test's end while bytes are still counted.
		end := time.Duration(p.Time)*time.Second + omit
		rep.iv.SetEnd(end)
		rep.per.SetEnd(end)
	}
	rep.iv.Run(ctx)
	rep.per.Run(ctx)
	return rep
}

// startStreams starts a goroutine (counted in wg) per stream we send on
// (on sctx) and per TCP stream we receive on (on rctx); sending tells
// whether any stream sends.
func (sv *i3ServerTest) startStreams(sctx, rctx context.Context, wg *sync.WaitGroup, sending bool, backstop time.Duration) {
	t, h := sv.t, sv.t.hub
	// The streams we send on share one payload: up to 128 streams of
	// 1 MiB blocks must not cost 128 MiB.
	var payload []byte
	if sending {
		payload = i3Payload(sv.blockLen())
	}
	for _, st := range t.streams {
		if st.send || st.tcp != nil {
			c := rctx
			if st.send {
				c = sctx
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := h.s.Catch(fmt.Sprintf("iperf3: stream %d of %s", st.id, t.peer), func() error {
					sv.stream(c, st, backstop, payload)
					return nil
				}); err != nil {
					st.err = err
				}
			}()
		}
	}
}

// awaitEnd waits for the control message that ends the data phase
// (TEST_END), refusing the test when it outlasts backstop or, with
// --max-rate, its streams (allC) go faster.
func (sv *i3ServerTest) awaitEnd(ctx context.Context, msgs chan ctrlMsg, backstop time.Duration, allC []*stats.Counters) (ctrlMsg, error) {
	h := sv.t.hub
	var m ctrlMsg
	var err error
	limit := time.NewTimer(backstop)
	defer limit.Stop()
	check := time.NewTicker(time.Second)
	defer check.Stop()
wait:
	for {
		select {
		case m = <-msgs:
			if m.err != nil {
				err = fmt.Errorf("the control connection failed during the test: %w", m.err)
			}
			break wait
		case <-limit.C:
			err = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoServerExpired})
			break wait
		case now := <-check.C:
			if h.cfg.MaxRate > 0 && sv.rate(allC, now) > h.cfg.MaxRate {
				err = sv.refuse(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoTotalRate})
				break wait
			}
		case <-ctx.Done():
			err = ctx.Err()
			break wait
		}
	}
	if err == nil && m.st != i3wire.TestEnd {
		err = sv.badMsg(m, "during the test")
	}
	return m, err
}

// maxWBIntervals bounds the per-stream intervals one test keeps for the
// wirebench extension, all streams together (about 100 bytes each).
const maxWBIntervals = 200_000

// wbPeriod is the length of the per-stream intervals the client asked for
// (wb_interval_ms, at least 10 ms; 1 s when it asked none), made longer
// when the test could run long enough, with as many streams as it has, to
// keep more than maxWBIntervals: the client's number must not decide how
// much memory the server holds. A lengthened period is a warning.
func (sv *i3ServerTest) wbPeriod(longest time.Duration) time.Duration {
	p := sv.t.p
	period := time.Second
	if p.WB != nil && p.WB.IntervalMs > 0 {
		period = 10 * time.Millisecond
		if p.WB.IntervalMs < int64(time.Hour/time.Millisecond) {
			period = max(time.Duration(p.WB.IntervalMs)*time.Millisecond, period)
		} else {
			period = time.Hour
		}
	}
	floor := longest * time.Duration(len(sv.t.streams)) / maxWBIntervals
	if period < floor {
		if p.WB != nil {
			sv.r.Warn(fmt.Sprintf("this test can run %v with %d streams: its per-stream intervals are %v long instead of %v, to keep at most %d in all",
				longest.Round(time.Second), len(sv.t.streams), floor.Round(time.Millisecond), period, maxWBIntervals))
		}
		period = floor
	}
	return period
}

// drain waits until the receive counters stop moving (20 ms without
// change) while no received byte waits unread in the TCP streams' sockets
// (a reader descheduled on a busy machine leaves them there), at most one
// second.
func drain(ctx context.Context, cs []*stats.Counters, tcp []net.Conn) {
	if len(cs) == 0 {
		return
	}
	sum := func() (b int64) {
		for _, c := range cs {
			b += c.Bytes.Load()
		}
		return b
	}
	queued := func() bool {
		for _, c := range tcp {
			if session.QueuedBytes(c) > 0 {
				return true
			}
		}
		return false
	}
	prev := sum()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < 50; i++ {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		now := sum()
		if now == prev && !queued() {
			return
		}
		prev = now
	}
}

// rate is the test's average rate so far, both directions together.
func (sv *i3ServerTest) rate(cs []*stats.Counters, now time.Time) float64 {
	var b int64
	for _, c := range cs {
		b += c.Bytes.Load()
	}
	return float64(b) * 8 / now.Sub(sv.start).Seconds()
}

// blockLen is the test's block (TCP) or datagram (UDP) length.
func (sv *i3ServerTest) blockLen() int {
	if n := int(sv.t.p.Len); n > 0 {
		return n
	}
	if sv.t.udp {
		return i3DefaultUDP
	}
	return session.DefaultTCPLength
}

// stream runs one TCP stream, or one UDP stream the server sends on (UDP
// receiving happens in the demultiplexer).
func (sv *i3ServerTest) stream(ctx context.Context, st *i3SrvStream, backstop time.Duration, payload []byte) {
	p := sv.t.p
	length := sv.blockLen()
	var per int64
	if n := int64(p.StreamsPerDirection()); p.Num > 0 {
		per = p.Num / n // rounded up, without overflowing near MaxInt64
		if p.Num%n != 0 {
			per++
		}
	}
	switch {
	case st.uconn != nil:
		pps := 0.0
		if p.Bandwidth > 0 {
			pps = float64(p.Bandwidth) / float64(length*8)
		}
		st.udpRes, st.err = engine.SendUDP(ctx, st.uconn, engine.UDPSendConfig{Template: payload, Stamp: i3Stamp(p.UDPCounters64Bit),
			PPS: pps, Duration: backstop, Bytes: per, FirstID: firstSeq(), Dst: st.dst, Batch: session.ServerSendBatch(length)}, &st.c)
	case st.send:
		st.tcpRes, st.err = session.SendTCP(ctx, st.tcp, p.ZeroCopy, engine.TCPSendConfig{Buffer: payload, Duration: backstop, Bytes: per}, &st.c)
	default:
		st.tcpRes, st.err = engine.ReceiveTCP(ctx, st.tcp, max(length, 128*1024), 0, nil, &st.c)
	}
	if ctx.Err() != nil {
		st.err = nil // ended by TEST_END
	}
}
