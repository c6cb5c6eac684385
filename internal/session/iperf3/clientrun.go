package iperf3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// run moves the data, ends the test and exchanges results. Failures are
// recorded in the result.
func (cl *i3Client) run(ctx context.Context) {
	cfg := cl.cfg
	cl.start = cl.started
	if cl.start.IsZero() {
		cl.start = time.Now()
	}
	cl.r.StartedAt = cl.start.UTC()
	rep := cl.startIntervals(ctx)

	// An interrupt (ctx done) ends the sending; the test still ends the
	// proper way on wrap, which ctx does not cancel: TEST_END, the results
	// exchange, each step bounded by i3StepTimeout.
	wrap := context.WithoutCancel(ctx)
	ctrlMsg := cl.readControl(ctx, wrap)

	var drops *session.SendPathDrops // a UDP test we send (its Receiver is the server's count of it)
	for _, s := range cl.streams {
		if s.send && s.udp != nil && drops == nil && !cfg.Bidir {
			drops = session.WatchSendPathDrops(s.udp.RemoteAddr().Addr())
		}
	}

	rctx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	sctx, stopSend := context.WithCancel(ctx)
	defer stopSend()
	var writing, sendWG, recvWG sync.WaitGroup
	cl.startStreams(sctx, rctx, &writing, &sendWG, &recvWG)
	// From the test's end until TEST_END is out, our TCP receivers hold
	// their reads (-R, --bidir): an iperf3 server sending to us is busy
	// for as long as we read, and on a loaded host a busy process waits
	// its turn for a CPU before it reads TEST_END and stops its clock;
	// with our window full its writes find no room, and TEST_END finds
	// it with less to do. What it sent meanwhile waits in our socket
	// buffer and is read and counted after TEST_END.
	if cfg.Duration > 0 && cfg.Bytes == 0 {
		holdAt := time.AfterFunc(time.Until(cl.start.Add(cfg.Duration)), cl.hold.Pause)
		defer holdAt.Stop()
	}
	defer cl.hold.Resume()
	ctrlErr, ctrlRead := cl.endTest(sctx, wrap, stopSend, &writing, &sendWG, ctrlMsg)
	stopSend()
	sendWG.Wait()
	var local session.LocalDrops
	if drops != nil {
		local = drops.Done()
	}
	stopRecv()
	recvWG.Wait()
	cl.stopIntervals(rep)
	if ctrlErr == nil {
		ctrlErr = cl.exchange(wrap)
	} else {
		ctrlErr = cl.closeControl(ctrlErr, ctrlRead, ctrlMsg)
	}
	cl.fill()
	session.ApplyOmit(cl.r, cfg.Omit, cl.omitted, true)
	warnPeerShort(cl.r, cfg.UDP)
	if drops != nil {
		local.Apply(cl.r, len(cl.streams) > 0 && cl.streams[0].udp != nil && cl.streams[0].udp.Capabilities().GSO)
	}
	session.WarnInterrupted(ctx, cl.r)
	// The server's own error is the cause; a stream it then reset is
	// only the consequence.
	var se *i3wire.ServerErr
	if ctrlErr != nil && (cl.r.Error == "" || errors.As(ctrlErr, &se)) {
		cl.r.Error = ctrlErr.Error()
	}
}

// clientReports are the client's running interval reports: the test's
// (iv) and the per-stream ones (per), with the streams they count.
type clientReports struct {
	iv, per *engine.Intervals
	ids     []int64
	allC    []*stats.Counters
}

// startIntervals starts the interval reports of the test and of each
// stream.
func (cl *i3Client) startIntervals(ctx context.Context) clientReports {
	cfg := cl.cfg
	var sendC, recvC []*stats.Counters
	var rep clientReports
	for _, s := range cl.streams {
		if s.send {
			sendC = append(sendC, &s.c)
		} else if s.urx != nil {
			recvC = append(recvC, &s.urx.rx.C)
		} else {
			recvC = append(recvC, &s.c)
		}
		rep.ids = append(rep.ids, s.id)
		rep.allC = append(rep.allC, cl.counters(s))
	}
	flows := directionFlows(sendC, recvC, true)
	perFlows := i3Flows(rep.ids, rep.allC)
	for k, s := range cl.streams {
		if s.send && s.tcp != nil {
			// TCP_INFO per interval: retransmits, cwnd, RTT.
			flows[0].TCP = append(flows[0].TCP, s.tcp)
			perFlows[k].TCP = []net.Conn{s.tcp}
		}
	}
	rep.iv = engine.NewIntervals(cl.start, cfg.Interval, cfg.OnInterval, flows...)
	rep.iv.SetOmit(cfg.Omit)
	perPeriod := cfg.Interval
	if perPeriod == 0 {
		perPeriod = time.Second
	}
	rep.per = engine.NewIntervals(cl.start, perPeriod, nil, perFlows...)
	rep.per.SetOmit(cfg.Omit)
	if cfg.Duration > 0 && cfg.Bytes == 0 {
		// The last row is Stop's, at the test's end (TEST_END): no row
		// is printed at the end while bytes are still counted.
		rep.iv.SetEnd(cfg.Duration)
		rep.per.SetEnd(cfg.Duration)
	}
	rep.iv.Run(ctx)
	rep.per.Run(ctx)
	return rep
}

// stopIntervals ends the streams' UDP receivers and the interval reports
// at the test's end.
func (cl *i3Client) stopIntervals(rep clientReports) {
	for _, s := range cl.streams {
		if s.urx != nil {
			s.totals = s.urx.stop()
		}
	}
	// The intervals end where the summary does, at TEST_END; what was
	// read after it (sent before it) is in the last row.
	cl.r.Intervals = rep.iv.Stop(cl.end)
	cl.perIv = rep.per.Stop(cl.end)
	cl.omitted = session.StreamOmits(rep.iv, cl.cfg.Omit, rep.ids, rep.allC)
}

// readControl reads the control connection, from now on in one
// goroutine, until the server's one message of the test: it sends that
// message's error (nil for EXCHANGE_RESULTS).
func (cl *i3Client) readControl(ctx, wrap context.Context) chan error {
	ctrlMsg := make(chan error, 1)
	go func() {
		st, err := cl.readState(ctx)
		if err != nil && ctx.Err() != nil {
			// The interrupt cut the read short, not the server (a read
			// cut short consumed nothing): read on, on wrap.
			st, err = cl.readState(wrap)
		}
		if err == nil && st != i3wire.ExchangeResults {
			err = fmt.Errorf("iperf3 server sent %v during the test", st)
		}
		ctrlMsg <- err
	}()
	return ctrlMsg
}

// startStreams starts a goroutine per stream: senders on sctx, receivers
// on rctx. writing counts the senders still writing: TEST_END follows the
// last write at once. A TCP sender's brief wait for acknowledgements runs
// beside TEST_END (sendWG counts it), not before it: the server's clock
// runs until it reads TEST_END.
func (cl *i3Client) startStreams(sctx, rctx context.Context, writing, sendWG, recvWG *sync.WaitGroup) {
	for _, s := range cl.streams {
		if s.send {
			sendWG.Add(1)
			writing.Add(1)
			wrote := sync.OnceFunc(writing.Done)
			go func() { defer sendWG.Done(); defer wrote(); cl.sendStream(sctx, s, wrote) }()
		} else {
			recvWG.Add(1)
			go func() { defer recvWG.Done(); cl.recvStream(rctx, s) }()
		}
	}
}

// endTest waits for the test's end (the senders done, or the server's
// message early), sets cl.end and, unless the server spoke first, sends
// TEST_END and waits for its answer. ctrlRead reports whether the
// reader's one message is taken.
func (cl *i3Client) endTest(sctx, wrap context.Context, stopSend context.CancelFunc, writing, sendWG *sync.WaitGroup, ctrlMsg chan error) (ctrlErr error, ctrlRead bool) {
	ended := make(chan struct{})
	go func() { cl.waitEnd(sctx, writing); close(ended) }()
	early := false
	select {
	case <-ended: // also after an interrupt: the senders stopped on sctx
	case ctrlErr = <-ctrlMsg:
		early, ctrlRead = true, true
		stopSend()
	}
	cl.hold.Pause()
	<-ended
	cl.end = time.Now()
	if early {
		return ctrlErr, ctrlRead
	}
	// The state machine moves first: the server's EXCHANGE_RESULTS may be
	// read before WriteState returns.
	cl.mMu.Lock()
	err := cl.m.Send(i3wire.TestEnd)
	cl.mMu.Unlock()
	if err == nil {
		wctx, cancel := step(wrap)
		err = cl.conn.WriteState(wctx, i3wire.TestEnd)
		cancel()
	}
	cl.hold.Resume()
	sendWG.Wait() // the acknowledgement waits, brief
	if err != nil {
		return fmt.Errorf("sending TEST_END: %w", err), ctrlRead
	}
	select {
	case ctrlErr = <-ctrlMsg:
		ctrlRead = true
	case <-time.After(i3StepTimeout):
		ctrlErr = errors.New("the iperf3 server did not answer TEST_END")
	}
	return ctrlErr, ctrlRead
}

// closeControl closes the control connection after the test failed with
// ctrlErr, and returns the error to report: the server's own, when it
// sent one.
func (cl *i3Client) closeControl(ctrlErr error, ctrlRead bool, ctrlMsg chan error) error {
	cl.ctrl.Close() // unblocks the reader goroutine
	if !ctrlRead {
		// The server's own error, read before we closed, is the cause of
		// whatever failed on our side (a stream it reset, a TEST_END our
		// state machine no longer allowed).
		var se *i3wire.ServerErr
		if m := <-ctrlMsg; errors.As(m, &se) {
			return m
		}
	}
	return ctrlErr
}

func (cl *i3Client) counters(s *i3ClientStream) *stats.Counters {
	if s.urx != nil {
		return &s.urx.rx.C
	}
	return &s.c
}

// waitEnd returns when the client's end condition is met: every sender
// done (a TCP sender once its data was acknowledged), or for a
// receive-only test the duration or byte count. TEST_END follows at once,
// as iperf3's own client sends it right after its last data, so the
// server's clock stops with the data.
func (cl *i3Client) waitEnd(ctx context.Context, senders *sync.WaitGroup) {
	cfg := cl.cfg
	sending := !cfg.Reverse
	if sending {
		senders.Wait()
		return
	}
	if cfg.Bytes == 0 {
		select {
		case <-time.After(time.Until(cl.start.Add(cfg.Duration))):
		case <-ctx.Done():
		}
		return
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var got int64
		for _, s := range cl.streams {
			got += cl.counters(s).Bytes.Load()
		}
		if got >= cfg.Bytes {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// sendStream runs one sending stream; wrote is called once its writes
// are over, before a TCP stream's brief wait for acknowledgements.
func (cl *i3Client) sendStream(ctx context.Context, s *i3ClientStream, wrote func()) {
	cfg := cl.cfg
	per := int64(0)
	if cfg.Bytes > 0 {
		per = (cfg.Bytes + int64(cfg.Parallel) - 1) / int64(cfg.Parallel)
	}
	if cfg.UDP {
		s.udpRes, s.err = engine.SendUDP(ctx, s.udp, engine.UDPSendConfig{Template: i3Payload(cfg.Length),
			Stamp: i3Stamp(cfg.UDPCounters64Bit), PPS: cfg.PPS() / float64(cfg.Parallel), Duration: cfg.Duration, Bytes: per, FirstID: firstSeq()}, &s.c)
		return
	}
	// No FIN (an iperf3 server stops reading at TEST_END, not at EOF),
	// and only a brief wait: TEST_END must follow the data at once. The
	// writes end with the test's clock, which started at TEST_RUNNING,
	// not with this goroutine's start.
	scfg := engine.TCPSendConfig{Buffer: i3Payload(cfg.Length), Duration: cfg.Duration, Bytes: per}
	if cfg.Duration > 0 {
		scfg.End = cl.start.Add(cfg.Duration)
	}
	sent := session.SendTCPDelivered(ctx, s.tcp, cfg.ZeroCopy, scfg, &s.c, false, wrote, engine.DrainOptions{Brief: true, Preamble: i3wire.CookieSize})
	s.tcpRes, s.tcpDel, s.err = sent.Res, sent.Del, sent.Err
	s.retr.read(s.tcp)
}

// sent is a TCP sending stream's figures.
func (s *i3ClientStream) sent() session.TCPSent {
	return session.TCPSent{Res: s.tcpRes, Del: s.tcpDel, Err: s.err}
}

func (cl *i3Client) recvStream(ctx context.Context, s *i3ClientStream) {
	if s.udp != nil {
		s.err = engine.ReceiveUDP(ctx, s.udp, engine.UDPReceiveConfig{OnBatch: s.urx.publish}, func(m *udpio.Message) bool {
			s.urx.feed(m.Buf[:m.N], m.Time)
			return true
		})
		return
	}
	s.tcpRes, s.err = engine.ReceiveTCPWith(ctx, s.tcp, engine.TCPReceiveConfig{BufSize: 128 * 1024, Hold: &cl.hold}, &s.c)
}
