package iperf2

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2/connectback"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

func runUDPClient(ctx context.Context, cfg *session.ClientConfig, r *result.Result) (*result.Result, error) {
	conns, err := dialUDPStreams(ctx, cfg, r)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	var back *connectback.Listener
	if cfg.Tradeoff || cfg.Dual {
		if back, err = connectback.Listen(ctx, cfg, conns[0].RemoteAddr().Addr(), conns[0].LocalAddr().Addr()); err != nil {
			return nil, err
		}
		defer back.Close()
	}
	if cfg.Reverse {
		return runUDPReverse(ctx, cfg, conns, r)
	}
	spec := udpClientStream(cfg)
	counters := make([]*stats.Counters, cfg.Parallel)
	for i := range counters {
		counters[i] = new(stats.Counters)
	}
	start := time.Now()
	iv := engine.NewIntervals(start, cfg.Interval, cfg.OnInterval, &engine.Flow{Name: flowName(back, "forward"), Counters: counters, Sender: true})
	iv.SetOmit(cfg.Omit)
	if back == nil && cfg.Bytes == 0 {
		// The last interval is Stop's, at the end of our sending: never a
		// row for the time the FIN exchange took (a server report delayed
		// by a queue made a 10 s test print a 10.00-10.22 row).
		iv.SetEnd(cfg.Duration) // (Duration includes Omit here: RunClient added it)
	}
	iv.Run(ctx)
	if back != nil {
		back.Start(ctx, iv, cfg.Dual)
	}
	drops := session.WatchSendPathDrops(conns[0].RemoteAddr().Addr())
	outs := spec.RunStreams(ctx, conns, counters, session.FillPattern)
	localDrops := drops.Done()
	if back != nil && cfg.Tradeoff {
		back.Release()
	}
	var backFlow *result.Flow
	waitBack := back != nil && !failedUnheard(outs)
	if waitBack {
		backFlow = back.Wait(ctx, cfg.Duration)
	}
	end := time.Now()
	if back == nil {
		// Our intervals count what we sent: they end with the last data
		// datagram, not with the FIN exchange after it.
		end = lastSend(outs)
	}
	r.Intervals = iv.Stop(end)
	fillUDPClientResult(r, cfg, outs)
	localDrops.Apply(r, conns[0].Capabilities().GSO)
	session.WarnInterrupted(ctx, r)
	if waitBack {
		r.AddReverse(backFlow, back.Warnings())
	}
	if back != nil && backFlow == nil && r.Receiver == nil && r.Error == "" && ctx.Err() == nil {
		r.Error = reverseRefused("the server neither reported on our datagrams nor connected back", conns[0].LocalAddr())
	}
	return r, nil
}

// failedUnheard says every stream ended with an error before the server
// answered (e.g. its port is closed): the error says why, and a server
// that never had the test will not connect back (-r/-d), so nothing is
// waited for or warned of beside it.
func failedUnheard(outs []udpstream.StreamOutcome) bool {
	for _, o := range outs {
		if o.Err == nil || o.Fin.Report != nil {
			return false
		}
	}
	return true
}

// dialUDPStreams opens the test's sockets, one per stream, and notes the
// first one in r (and to OnConnected).
func dialUDPStreams(ctx context.Context, cfg *session.ClientConfig, r *result.Result) ([]udpio.Conn, error) {
	conns := make([]udpio.Conn, cfg.Parallel)
	for i := range conns {
		c, err := cfg.DialUDP(ctx, i)
		if err != nil {
			closeAll(conns)
			return nil, err
		}
		conns[i] = c
	}
	r.Test.Peer = conns[0].RemoteAddr().String()
	cfg.Connected(conns[0].LocalAddr(), r.Test.Peer)
	caps := conns[0].Capabilities()
	cfg.RecordSocket(r, nil, &caps)
	return conns, nil
}

// udpClientStream is what each of the test's streams sends: its share of
// the rate and of the byte count, in the dialect's layout and FIN.
func udpClientStream(cfg *session.ClientConfig) *udpstream.Sender {
	layout, fin := i2wire.LayoutModern, udpstream.FinModern
	if cfg.Dialect == session.DialectIperf2Legacy {
		layout, fin = i2wire.LayoutLegacy, udpstream.FinLegacy
	}
	spec := &udpstream.Sender{Layout: layout, Header: header(cfg, true), Length: cfg.Length,
		PPS: cfg.PPS() / float64(cfg.Parallel), Duration: cfg.Duration, Bytes: cfg.Bytes, Fin: fin, FinLen: cfg.FinLen}
	if cfg.Bytes > 0 {
		spec.Bytes = cfg.Bytes / int64(cfg.Parallel)
	}
	return spec
}

// lastSend is when the streams' last data datagram went out (now when
// none did).
func lastSend(outs []udpstream.StreamOutcome) time.Time {
	var end time.Time
	for _, o := range outs {
		if o.Send.End.After(end) {
			end = o.Send.End
		}
	}
	if end.IsZero() {
		end = time.Now()
	}
	return end
}

// flowName labels the forward flow only when a second flow exists.
func flowName(back *connectback.Listener, name string) string {
	if back == nil {
		return ""
	}
	return name
}

func closeAll(conns []udpio.Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// fillUDPClientResult sums the streams into the result: our own send
// counts, and the receiver counts from the server reports.
func fillUDPClientResult(r *result.Result, cfg *session.ClientConfig, outs []udpstream.StreamOutcome) {
	snd := &result.Sender{}
	var rcv *result.Receiver
	var maxLag, span time.Duration
	var behind engine.Behind
	var offered float64 // datagrams/s summed over streams
	noReport, echoes, noReportFINs := 0, 0, 0
	badReport := false
	var first, last time.Time
	for i, o := range outs {
		if first.IsZero() || o.Send.Start.Before(first) {
			first = o.Send.Start
		}
		if o.Send.End.After(last) {
			last = o.Send.End
		}
		// The FIN is a full datagram, counted like iperf does: as datagram
		// |id|, so the FINs up to the one the server answered (those before
		// it were lost) when the report says which (countFINs).
		fins := int64(0)
		if o.Fin.FINs > 0 {
			fins = 1
		}
		var rr *result.Receiver
		if o.Fin.Report != nil {
			var implausible bool
			rr, implausible = udpstream.ReportReceiver(o.Fin.Report)
			badReport = badReport || implausible
			fins = udpstream.CountFINs(rr, layoutOf(cfg), o.Send.Packets, o.Fin.FINs)
		}
		s := &result.Sender{Bytes: o.Send.Bytes + fins*int64(max(cfg.Length, cfg.FinLen)), Packets: o.Send.Packets + fins, SendErrors: o.Send.Errors,
			Seconds: o.Send.End.Sub(o.Send.Start).Seconds()}
		offeredRate(s, o.Send, cfg.Length)
		offered += s.PacketsPerSecond
		snd.Bytes += s.Bytes
		snd.Packets += s.Packets
		snd.SendErrors += s.SendErrors
		maxLag, snd.Pacing = max(maxLag, o.Send.MaxLag), o.Send.Pacing.String()
		behind.Add(o.Send.Behind)
		span += o.Send.End.Sub(o.Send.Start)
		echoes += o.Fin.Echoes
		st := result.Stream{ID: i + 1, Sender: s}
		if o.Fin.Report != nil {
			if wb := o.Fin.Report.WB; wb != nil && wb.Diagnosis != "" {
				r.Diagnoses = append(r.Diagnoses, "the server's arrivals: "+wb.Diagnosis)
			}
			st.Receiver = rr
			if rcv == nil {
				rcv = &result.Receiver{}
			}
			session.SumReceiver(rcv, rr)
		} else if o.Err == nil || o.Fin.FINs > 0 {
			// (A stream that ended with an error before its FIN has
			// the error to say why it has no report.)
			noReport++
			noReportFINs += o.Fin.FINs
		}
		if o.Err != nil && r.Error == "" {
			r.Error = o.Err.Error()
		}
		if cfg.Parallel > 1 {
			r.Streams = append(r.Streams, st)
		}
	}
	snd.Seconds = last.Sub(first).Seconds()
	snd.PacketsPerSecond = offered
	snd.BitsPerSecond = offered * float64(cfg.Length*8)
	r.Sender = snd
	if rcv != nil {
		r.Receiver = rcv
	}
	session.WarnSender(r, cfg, snd, maxLag, &behind, span)
	if badReport {
		r.Warn(udpstream.ImplausibleReport)
	}
	if noReport > 0 {
		r.Warn(fmt.Sprintf("%d of %d streams got no server report after their FINs (%d FINs sent, %s): the receiver's counts are unknown for them",
			noReport, len(outs), noReportFINs, finWait(cfg)))
	}
	if rcv != nil && cfg.Parallel > 1 {
		r.Warn("the receiver jitter shown for several streams is the largest of the streams' jitters")
	}
}

func finWait(cfg *session.ClientConfig) string {
	if cfg.Dialect == session.DialectIperf2Legacy {
		return "up to 10, 250 ms apart"
	}
	return "up to 201, 10 ms apart"
}

// layoutOf is the datagram layout cfg's UDP client sends.
func layoutOf(cfg *session.ClientConfig) i2wire.Layout {
	if cfg.Dialect == session.DialectIperf2Legacy {
		return i2wire.LayoutLegacy
	}
	return i2wire.LayoutModern
}

// offeredRate sets a UDP sender's rates from what it offered between its
// first and last datagram, not from bytes over the test's length: a
// 1-second test at 8.5 datagrams/s sends 9 datagrams plus the FIN, and
// bytes over time would call that 118 kbit/s for the 100 kbit/s asked.
func offeredRate(s *result.Sender, send engine.UDPSendResult, length int) {
	s.PacketsPerSecond = send.OfferedRate()
	s.BitsPerSecond = s.PacketsPerSecond * float64(length*8)
}

// reverseSeq64 says whether the server's datagrams in a -R test carry
// 64-bit ids: they do when our header asked for them (FlagSeqNo64b), as a
// 2.1 server then writes the upper half too (ours always does). Read as 32
// bits, id 2^31 (35 minutes at 1 M/s) would be taken for the server's FIN.
func reverseSeq64(hdr []byte) bool {
	h, _, err := i2wire.ParseClientHeader(hdr)
	return err == nil && h.Flags&i2wire.FlagSeqNo64b != 0
}

// runUDPReverse runs a 2.1 -R UDP test: we send our header until the
// server's traffic arrives, then receive it until its final negative id.
func runUDPReverse(ctx context.Context, cfg *session.ClientConfig, conns []udpio.Conn, r *result.Result) (*result.Result, error) {
	hdr := header(cfg, true)
	recvs := make([]*udpstream.Receiver, len(conns))
	counters := make([]*stats.Counters, len(conns))
	start := time.Now()
	for i := range conns {
		recvs[i] = udpstream.NewReceiverAs(conns[i].RemoteAddr(), i2wire.LayoutModern, reverseSeq64(hdr), start)
		recvs[i].JitterMethod = session.JitterMethod(conns[i].Capabilities().GRO)
		counters[i] = recvs[i].Counters()
	}
	iv := engine.NewIntervals(start, cfg.Interval, cfg.OnInterval, &engine.Flow{Counters: counters})
	iv.SetOmit(cfg.Omit)
	iv.Run(ctx)
	drops0 := make([]uint64, len(conns))
	for i, c := range conns {
		drops0[i], _ = c.Drops()
	}
	limit := cfg.Duration + 3*time.Second
	if cfg.Bytes > 0 {
		limit = 10 * time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = receiveReverse(rctx, c, hdr, cfg.Length, recvs[i])
		}()
	}
	wg.Wait()
	r.Intervals = iv.Stop(time.Now())
	var rcv result.Receiver
	silent := 0 // streams the server sent nothing on
	for i, rv := range recvs {
		rv.EndIdle()
		rr := rv.Summary()
		if cfg.Parallel > 1 {
			r.Streams = append(r.Streams, result.Stream{ID: i + 1, Receiver: rr})
		}
		session.SumReceiver(&rcv, rr)
		for _, w := range rv.Warnings() {
			if !rv.IdleEnded() {
				r.Warn(w)
			}
		}
		if d, ok := conns[i].Drops(); ok && d > drops0[i] {
			rr.HostDrops = int64(d - drops0[i])
			rcv.HostDrops += rr.HostDrops
			r.Warn(fmt.Sprintf("stream %d: our socket dropped %s because its receive buffer was full (host-side loss, counted as lost)",
				i+1, session.DroppedDatagrams(d-drops0[i], conns[i].Capabilities().GRO)))
		}
		if d := rv.Diagnose(); d != "" {
			r.Diagnoses = append(r.Diagnoses, d)
		}
		if rv.IdleEnded() && rv.Started() {
			r.Warn(fmt.Sprintf("stream %d: the server's final datagram never arrived; counts run to the last datagram received", i+1))
		}
		if !rv.Started() {
			silent++
			if len(recvs) > 1 {
				r.Warn(fmt.Sprintf("stream %d: the server sent nothing back", i+1))
			}
		}
		if errs[i] != nil && r.Error == "" {
			r.Error = errs[i].Error()
		}
	}
	r.Receiver = &rcv
	if silent > 0 && ctx.Err() == nil {
		how := "the server sent nothing back (an iperf 2 server before 2.1 has no -R)"
		if silent < len(recvs) {
			how = fmt.Sprintf("the server sent nothing back on %d of %d streams", silent, len(recvs))
		}
		msg := reverseRefused(how, conns[0].LocalAddr())
		if silent == len(recvs) && r.Error == "" {
			r.Error = msg
		} else {
			r.Warn(msg)
		}
	}
	return r, nil
}

// receiveReverse sends hdr in a first datagram (long enough for all of it
// even when -l is shorter: cut, it asked for nothing) until data arrives,
// then counts the server's datagrams.
func receiveReverse(ctx context.Context, c udpio.Conn, hdr []byte, length int, rv *udpstream.Receiver) error {
	length = max(length, i2wire.LayoutModern.HeaderLen()+len(hdr))
	first := (&udpstream.Sender{Layout: i2wire.LayoutModern, Header: hdr, Length: length}).Template(session.FillPattern)
	i2wire.PutDatagram(first, i2wire.LayoutModern, 0, time.Now())
	var got atomic.Bool
	hello := func() {
		for k := 0; k < 100 && !got.Load() && ctx.Err() == nil; k++ {
			_, _ = c.WriteBatch([]udpio.Message{{Buf: first}})
			time.Sleep(20 * time.Millisecond)
		}
	}
	var once sync.Once
	go once.Do(hello)
	cfg := engine.UDPReceiveConfig{Idle: session.DefaultIdleTimeout, OnBatch: rv.Publish}
	return engine.ReceiveUDP(ctx, c, cfg, func(m *udpio.Message) bool {
		got.Store(true)
		rv.FeedArrived(m.Buf[:m.N], m.Time, m.ArrivedAt())
		return !rv.Done()
	})
}
