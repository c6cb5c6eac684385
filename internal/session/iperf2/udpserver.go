package iperf2

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2/connectback"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	"github.com/wirebench/wirebench/internal/sharedcause"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// maxUDPPayload is the largest UDP payload (IPv4); longer lengths in a
// client header are clamped to it.
const maxUDPPayload = 65507

// finishedKeep is how long a finished UDP test still answers late FINs.
const finishedKeep = 10 * time.Second

// udpTest is one UDP test the server is running or has just finished.
type udpTest struct {
	id        int
	rx        *udpstream.Receiver
	res       *result.Result
	iv        *engine.Intervals
	reverse   bool           // the server sends (-R); incoming datagrams are hellos
	tx        stats.Counters // what the server sends (-R, connect-back)
	sendDone  chan struct{}
	finished  bool
	expiresAt time.Time // monotonic
	heard     time.Time // its last datagram's arrival (monotonic): the idle timeout runs from it
	dropsAt   uint64
	dropsOK   bool
	// startN is s.udpStarts once this test started; sharedAtStart says
	// other tests (or another protocol) had the socket then. Either way,
	// its drop counter is the socket's, not this test's.
	startN        int
	sharedAtStart bool
	member        *groupMember // its client's parallel streams (-P), if any
	release       func()       // gives back its per-source slot
	refused       bool         // refused at its start: its datagrams are ignored
	// own is its socket of its own once it proved busy (udpown.go);
	// ownTried says that failed; ratedAt and ratedPackets are where the
	// last rate check (maybeOwnSocket) stood.
	own          *session.StreamSocket
	ownTried     bool
	ratedAt      time.Time
	ratedPackets int64
	// fed says datagrams were fed since the read's end published its
	// counts (s.udpFed holds it then).
	fed bool
}

// finLagWarn is how late a FIN may be read before the server logs that its
// reader is behind.
const finLagWarn = 500 * time.Millisecond

// Datagram handles one datagram from src (session.Fallback); a panic
// while doing so ends src's test (if it has one) with an error, and the
// reader carries on with the next datagram.
func (s *server) Datagram(ctx context.Context, src netip.AddrPort, b []byte, at, arrived time.Time) {
	s.holdForListener()
	s.arrived = arrived
	s.datagramLocked(ctx, src, b, at)
}

// holdForListener takes s.udpMu for the listener's reader, once per read:
// it keeps it through the read's datagrams and lets go at the read's
// Flush, so the listener pays one lock per read, not two per datagram.
// Only the listener's goroutine calls it (Fallback's methods).
func (s *server) holdForListener() {
	if !s.listenerHolds {
		s.udpMu.Lock()
		s.listenerHolds = true
	}
}

// releaseForListener lets go of what holdForListener took.
func (s *server) releaseForListener() {
	if s.listenerHolds {
		s.listenerHolds = false
		s.udpMu.Unlock()
	}
}

// datagramLocked is Datagram with s.udpMu held: the listener's reader and
// the readers of own sockets (udpown.go) both come here.
func (s *server) datagramLocked(ctx context.Context, src netip.AddrPort, b []byte, at time.Time) {
	s.datagramOf(ctx, src, s.udpTests[src], b, at)
}

// datagramOf is datagramLocked for a caller that knows src's test, t
// (nil: none): an own socket's reader, which looked it up once per read.
func (s *server) datagramOf(ctx context.Context, src netip.AddrPort, t *udpTest, b []byte, at time.Time) {
	tests := s.udpTests
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		s.LogPanic("udp: "+src.String(), v)
		if t := tests[src]; t != nil && !t.finished {
			_ = s.Catch("udp: ending the test of "+src.String(), func() error {
				s.endUDP(t, fmt.Sprintf("internal error (panic: %v); see the server log", v))
				return nil
			})
		}
	}()
	if len(b) < 12 {
		s.Log("short", fmt.Sprintf("udp: ignored a %d-byte datagram from %s: too short for an iperf header", len(b), src))
		return
	}
	s.iperf2Datagram(ctx, tests, src, t, b, at)
}

// OwnsUDP reports whether src has a test here, running or kept after its
// end to answer late FINs (session.Fallback).
func (s *server) OwnsUDP(src netip.AddrPort) bool {
	s.holdForListener() // let go at the read's Flush
	return s.udpTests[src] != nil
}

// Stop ends the tests still running when the reader ends
// (session.Fallback).
func (s *server) Stop() {
	s.holdForListener()
	defer s.releaseForListener()
	for _, t := range s.udpTests {
		if !t.finished {
			s.endUDP(t, "the server stopped during the test")
		}
	}
}

// iperf2Datagram handles one datagram (at least 12 bytes) of an iperf2
// test from src; t is src's test, if it has one.
func (s *server) iperf2Datagram(ctx context.Context, tests map[netip.AddrPort]*udpTest, src netip.AddrPort, t *udpTest, b []byte, at time.Time) {
	if t != nil && t.finished && !t.reverse && !t.refused && t.rx.OpensNewTest(b) {
		// The source of a finished test starts another one: its
		// datagrams must not be fed to the old test (wrong counts, the
		// old report in the old layout). Datagrams taken for late ones
		// of the old test may have been this test's first.
		delete(tests, src)
		s.udpFinished--
		s.feedHeld(ctx, tests, src, t.rx.TakeHeld(b))
		t = tests[src]
	}
	if t == nil {
		id, _, _, _ := i2wire.ParseDatagram(b, i2wire.DetectUDPLayout(b), false)
		if i2wire.IsFIN(id) {
			s.Log("stray-fin", fmt.Sprintf("udp: ignored a FIN from %s, which has no test here", src))
			s.trace(src, "a FIN (id %d) with no test here: ignored", id)
			return
		}
		if s.endedHandles(ctx, tests, src, b, at) {
			return
		}
		if len(tests) >= s.cfg.MaxTests && !s.evictFinishedUDP(tests) {
			s.Log("full", fmt.Sprintf("udp: ignored a new test from %s: %d tests are open (--max-tests)", src, len(tests)))
			return
		}
		if t = s.startUDP(ctx, src, b, at); t == nil {
			s.trace(src, "a new test refused by a per-source limit")
			return // refused by a per-source limit (logged)
		}
		tests[src] = t
		s.trace(src, "test %d opened by a %d-byte datagram (%s)", t.id, len(b), t.res.Test.Dialect)
	}
	t.heard = s.arrived
	if t.refused {
		// Keep ignoring the client while it insists, with no new result.
		t.expiresAt = s.arrived.Add(finishedKeep)
		return
	}
	session.Hook("udp-datagram", src)
	if t.reverse {
		return // the client's hellos while we send
	}
	unanswered, done := t.rx.Unanswered(), t.rx.Done()
	reply := t.rx.FeedArrived(b, at, s.arrived)
	if session.Tracing() {
		s.traceFeed(src, t, b, done, reply != nil, t.rx.Unanswered() > unanswered)
	}
	if !t.fed {
		t.fed = true
		s.udpFed = append(s.udpFed, t)
	}
	if !done && t.rx.Done() && !t.rx.IdleEnded() {
		// The FIN: a reader this far behind answers after an iperf 2.1
		// client stopped waiting (about 2 s). Say so, with the figure:
		// it is the server's CPU, not the network.
		if lag := time.Since(s.arrived); lag > finLagWarn {
			s.Log("fin-lag", fmt.Sprintf("udp: read the FIN from %s %v after it arrived: this server's UDP reader is behind (short of CPU? the server runs %s)",
				src, lag.Round(time.Millisecond), s.cfg.Priority))
		}
	}
	if t.rx.Unanswered() > unanswered {
		why := fmt.Sprintf("its report was already re-sent %d times", t.rx.Resends())
		if t.rx.Report() == nil {
			why = "its test ended without a FIN (idle timeout)"
		}
		s.Log("late-fin", fmt.Sprintf("udp: ignored a late FIN from %s: %s", src, why))
	}
	if reply != nil {
		// Sent with the other reports of this read (Flush): a
		// send is a system call, and under CPU contention every one the
		// reader makes can cost it its turn to run for tens to hundreds
		// of milliseconds, while FINs queue up unread.
		s.udpReports = append(s.udpReports, udpio.Message{Buf: reply, Addr: src})
		t.rx.ReportSent(time.Now())
	}
	if t.rx.Done() && !t.finished {
		s.endUDP(t, "")
	}
	if s.listenerHolds && t.own == nil && !t.ownTried && !t.finished &&
		t.rx.Received()-t.ratedPackets >= ownEarlyCheck {
		// A fast test moves within its first milliseconds rather than
		// at the next sweep, while the listener's one reader carries it
		// and every other test (it dropped datagrams in that time with
		// two fast streams sharing two cores).
		s.maybeOwnSocket(ctx, t, src, s.arrived)
	}
}

// Flush publishes the counts of the tests fed in one read of the UDP
// socket and sends the server reports queued meanwhile, in one batch.
func (s *server) Flush() {
	s.holdForListener()
	defer s.releaseForListener()
	s.flushLocked()
}

// flushLocked is Flush with s.udpMu held: the counts of the tests fed in
// this read are published first, so a report's test shows them whole.
func (s *server) flushLocked() {
	for _, t := range s.udpFed {
		t.rx.Publish()
		t.fed = false
	}
	clear(s.udpFed)
	s.udpFed = s.udpFed[:0]
	if len(s.udpReports) == 0 {
		return
	}
	// A failed send (ECONNREFUSED, ENOBUFS) skips that report only.
	for rest := s.udpReports; len(rest) > 0; {
		n, err := s.udp.WriteBatch(rest)
		for _, m := range rest[:min(n, len(rest))] {
			s.trace(m.Addr, "report of %d bytes sent", len(m.Buf))
		}
		if err == nil {
			break
		}
		s.Log("reply", fmt.Sprintf("udp: sending the report to %s: %v", rest[min(n, len(rest)-1)].Addr, err))
		s.trace(rest[min(n, len(rest)-1)].Addr, "report not sent: %v", err)
		rest = rest[min(n+1, len(rest)):]
	}
	clear(s.udpReports)
	s.udpReports = s.udpReports[:0]
}

// evictFinishedUDP frees a slot held by a finished test (kept only to
// answer late FINs), so finished tests never lock new ones out. It reports
// whether it freed one.
func (s *server) evictFinishedUDP(tests map[netip.AddrPort]*udpTest) bool {
	if s.udpFinished == 0 {
		return false
	}
	for src, t := range tests {
		if t.finished {
			s.forgetUDP(src, t, s.arrived)
			return true
		}
	}
	return false
}

// startUDP opens a test from its first datagram; it returns nil when a
// per-source limit refuses the test, and a test already finished (refused)
// when it would make us send to a source we may not send to.
func (s *server) startUDP(ctx context.Context, src netip.AddrPort, b []byte, at time.Time) *udpTest {
	// Admission first: a refused source gets no entry, so each of its
	// datagrams comes back here, and must not build a test (parse, result,
	// socket capabilities, the drop counter's read) only to throw it away.
	release, ok := s.AdmitSource("udp", src.Addr())
	if !ok {
		return nil
	}
	rx := udpstream.NewReceiver(src, b, s.arrived)
	rx.JitterMethod = session.JitterMethod(s.udp.Capabilities().GRO)
	if err := rx.HeaderErr(); err != nil {
		s.Log("udp-header", fmt.Sprintf("udp: %s announced a test header but sent it cut short (%v); counting its datagrams as header-less data", src, err))
	}
	h, hasHdr := rx.Header()
	r := session.NewServerResult(result.UDP, udpDialect(rx.Layout(), hasHdr), src, s.Port())
	caps := s.udp.Capabilities()
	s.RecordSocket(r, nil, &caps)
	r.Version = session.VersionString()
	if hasHdr {
		r.Test.PeerVersion = i2wire.VersionString(h.VersionU, h.VersionL)
		if d, ok := h.Duration(); ok {
			r.Test.Duration = d.Seconds()
		}
		if v, pps := h.Rate(); h.HasExtension() && v > 0 {
			if pps {
				r.Test.RatePPS = float64(v)
			} else {
				r.Test.RateBPS = float64(v)
			}
		} else if h.WinBand > 0 {
			r.Test.RateBPS = float64(h.WinBand)
		}
		if h.NumThreads > 0 {
			r.Test.Streams = int(h.NumThreads)
		}
	}
	r.Test.Length = len(b)
	t := &udpTest{rx: rx, res: r, ratedAt: s.arrived}
	t.dropsAt, t.dropsOK = s.udp.Drops()
	s.udpStarts++
	t.startN, t.sharedAtStart = s.udpStarts, len(s.udpTests) > s.udpFinished || s.OtherUDPSources() > 0
	switch {
	case hasHdr && h.Flags&i2wire.FlagVersion2 != 0 && h.UpperFlags&i2wire.UpperReverse != 0:
		t.reverse = true
		r.Test.Direction, r.Test.Mode = result.DirSend, "reverse"
	case hasHdr && h.Flags&i2wire.FlagVersion1 != 0:
		r.Test.Mode = "tradeoff"
		if h.Flags&i2wire.FlagRunNow != 0 {
			r.Test.Mode, r.Test.Direction = "dual", result.DirBidir
		}
	}
	if err := s.CheckReverse(src.Addr()); err != nil && r.Test.Mode != "" {
		// The modes (reverse, tradeoff, dual) all make us send. Nothing
		// goes back to an address we may not send to, so the client
		// learns of the refusal only by receiving nothing.
		release()
		s.Log("refused-reverse", fmt.Sprintf("udp: %s: refused a %s test: %v", src, r.Test.Mode, err))
		t.refused, t.finished, t.expiresAt = true, true, s.arrived.Add(finishedKeep)
		s.udpFinished++
		s.RefuseTest(r, err)
		return t
	}
	t.release = release
	t.id = s.NewTest(r)
	counted := rx.Counters()
	if t.reverse {
		counted = &t.tx // the client's datagrams are only hellos
	}
	emit := s.Interval(t.id)
	if !t.reverse && r.Test.Mode == "" {
		t.member = s.joinGroup(ctx, result.UDP, src, h, hasHdr, t.id, s.arrived, counted)
		emit = s.emitter(t.member, t.id)
	}
	t.iv = engine.NewIntervals(s.arrived, s.cfg.Interval, emit, &engine.Flow{Counters: []*stats.Counters{counted}, Sender: t.reverse})
	if d, ok := h.Duration(); hasHdr && ok && d > 0 {
		t.iv.SetEnd(d) // the last row is Stop's, at the last datagram
	}
	t.iv.Run(ctx)
	switch r.Test.Mode {
	case "reverse":
		t.sendDone = make(chan struct{})
		s.Go("udp reverse to "+src.String(), func() {
			defer close(t.sendDone)
			s.sendUDP(ctx, t, s.udp, src, udpstream.FinReverse)
		})
	case "dual":
		t.sendDone = make(chan struct{})
		s.connectBackUDP(ctx, t, src)
	}
	return t
}

// sendUDP sends the server's side of a reverse or connect-back test on
// conn to dst, as the client's header asked, capped by MaxDuration.
func (s *server) sendUDP(ctx context.Context, t *udpTest, conn udpio.Conn, dst netip.AddrPort, fin udpstream.FinStyle) {
	defer func() {
		if v := recover(); v != nil {
			s.LogPanic("udp: sending to "+t.rx.Peer().String(), v)
			if t.res.Error == "" {
				t.res.Error = fmt.Sprintf("sending: internal error (panic: %v); see the server log", v)
			}
		}
	}()
	h, _ := t.rx.Header()
	length := int(h.BufLen)
	if length <= 0 {
		length = t.res.Test.Length
	}
	// A header may ask for any length up to 2^31: clamp to what fits in
	// a UDP datagram, or one garbage datagram makes us allocate gigabytes.
	length = min(max(length, 16), maxUDPPayload)
	d, ok := h.Duration()
	if !ok {
		d = s.cfg.MaxDuration
	}
	pps := t.res.Test.RatePPS
	if pps == 0 {
		rate := t.res.Test.RateBPS
		if rate == 0 {
			rate = session.DefaultUDPRateBPS
		}
		pps = rate / float64(length*8)
	}
	bps, d := s.sendCaps("udp", t.res, t.rx.Peer(), pps*float64(length*8), d)
	pps = bps / float64(length*8)
	var bytes int64
	if n, ok := h.ByteCount(); ok {
		bytes, d = n, s.cfg.MaxDuration
	}
	spec := &udpstream.Sender{Layout: i2wire.LayoutModern, Length: length, PPS: pps, Duration: d, Bytes: bytes, Fin: fin,
		Batch: session.ServerSendBatch(length)}
	if fin != udpstream.FinReverse { // a connect-back: a new test, which says its ids' width
		spec.Header = connectback.SenderHeader(h, length, d, bytes, bps)
	}
	tmpl := spec.Template(session.FillPattern)
	snd, err := spec.Send(ctx, conn, dst, tmpl, &t.tx)
	out, ferr := spec.Finish(ctx, conn, dst, tmpl, snd.Packets)
	fins := int64(1) // the FIN counts as a datagram, as iperf counts it (countFINs)
	flow := &result.Flow{Direction: result.DirSend}
	if out.Report != nil {
		var implausible bool
		if flow.Receiver, implausible = udpstream.ReportReceiver(out.Report); implausible {
			t.res.Warn(udpstream.ImplausibleReport)
		}
		fins = udpstream.CountFINs(flow.Receiver, i2wire.LayoutModern, snd.Packets, out.FINs)
	} else if fin != udpstream.FinReverse {
		t.res.Warn("the client sent no report for the connect-back test: its receive counts are unknown")
	}
	sd := &result.Sender{Bytes: snd.Bytes + fins*int64(length), Packets: snd.Packets + fins, SendErrors: snd.Errors, Seconds: snd.End.Sub(snd.Start).Seconds()}
	session.RateOf(sd)
	flow.Sender = sd
	if err == nil {
		err = ferr
	}
	if err != nil && t.res.Error == "" {
		t.res.Error = "sending: " + err.Error()
	}
	if fin == udpstream.FinReverse {
		t.res.Sender = sd
		t.res.Test.Length, t.res.Test.RatePPS, t.res.Test.Duration = length, pps, d.Seconds()
		t.res.Test.RateBPS = pps * float64(length*8)
		return
	}
	t.res.Reverse = flow
}

// connectBackUDP starts the legacy -r/-d connect-back: a new test from us to
// the client's address (never any other) on the port its header names.
func (s *server) connectBackUDP(ctx context.Context, t *udpTest, src netip.AddrPort) {
	if t.sendDone == nil {
		t.sendDone = make(chan struct{})
	}
	hdr, _ := t.rx.Header()
	port := int(hdr.Port)
	if port <= 0 || port > 65535 {
		port = s.Port()
	}
	dst := netip.AddrPortFrom(src.Addr(), uint16(port))
	s.Go("udp connect-back to "+dst.String(), func() {
		defer close(t.sendDone)
		if err := s.SelfTarget(dst); err != nil {
			t.res.Warn(err.Error())
			s.Log("self", "udp: "+err.Error())
			return
		}
		conn, err := udpio.Dial(ctx, s.Network("udp"), dst.String(), net.JoinHostPort(s.cfg.Bind, strconv.Itoa(0)), s.UDPOptions(false))
		if err != nil {
			t.res.Warn(fmt.Sprintf("connect-back to %s failed: %v", dst, err))
			return
		}
		defer conn.Close()
		s.sendUDP(ctx, t, conn, netip.AddrPort{}, udpstream.FinModern)
	})
}

// Sweep ends tests whose client went silent (unless idleOK is false: now
// cannot tell silence) and forgets finished ones (session.Fallback).
func (s *server) Sweep(ctx context.Context, now time.Time, idleOK bool) {
	if !s.listenerHolds { // a sweep on a tick: no read's Flush follows
		s.holdForListener()
		defer s.releaseForListener()
	}
	for src, t := range s.udpTests {
		switch {
		case t.finished && now.After(t.expiresAt):
			s.forgetUDP(src, t, now)
		case idleOK && !t.finished && !t.reverse && now.Sub(t.heard) > s.cfg.IdleTimeout:
			s.trace(src, "ended without a FIN after %v of silence", now.Sub(t.heard).Round(time.Millisecond))
			t.rx.EndIdle()
			s.endUDP(t, "")
		case t.reverse && !t.finished:
			select {
			case <-t.sendDone:
				s.endUDP(t, "")
			default:
			}
		case !t.finished:
			s.maybeOwnSocket(ctx, t, src, now)
		}
	}
}

// endUDP finishes a test: its result is complete once its own sending (if
// any) is done.
func (s *server) endUDP(t *udpTest, why string) {
	t.finished = true
	if t.own != nil {
		defer t.own.Close() // its reader ends; src's datagrams come to the listener
	}
	s.udpFinished++
	t.expiresAt = time.Now().Add(finishedKeep)
	r := t.res
	// The intervals end with our receive (or, for -R, our send, which is
	// over by now): a tradeoff connect-back after it is a flow of its own.
	// Stopped here, on the reader, so that no periodic report comes after the end.
	end := time.Now()
	if !t.reverse {
		// They end with the last data datagram counted, not with the FIN
		// (or the idle timeout) that ended the test after it.
		end = countedUntil(end, t.rx.LastData())
	}
	r.Intervals = t.iv.Stop(end)
	// What we received is read here, on the reader goroutine that feeds
	// t.rx; the finish below may run on another goroutine once our own
	// sending is over, while late FINs still reach t.rx.
	var rcv *result.Receiver
	var warns, diags []string
	if !t.reverse {
		rcv = t.rx.Summary()
		warns = t.rx.Warnings()
		if d := t.rx.Diagnose(); d != "" {
			diags = append(diags, d)
		}
		d, ok := s.udp.Drops()
		if ok && t.dropsOK && t.own != nil {
			d += t.own.Drops() // the test's own socket's (udpown.go)
		}
		if ok && t.dropsOK && d > t.dropsAt {
			// The counter is the socket's: it cannot tell whose datagrams it dropped.
			shared := t.sharedAtStart || s.udpStarts != t.startN
			warns = append(warns, sharedcause.SocketDropsWarning(session.DroppedDatagrams(d-t.dropsAt, s.udp.Capabilities().GRO), shared))
			rcv.HostDrops = int64(d - t.dropsAt)
		}
	}
	finish := func() {
		// Set once our own sending is over: the sender writes r.Error too.
		if why != "" {
			r.Error = why
		}
		if rcv != nil {
			r.Receiver = rcv
			r.Warnings = append(r.Warnings, warns...)
			r.Diagnoses = append(r.Diagnoses, diags...)
		}
		// The slot first: a client may start its next test the moment
		// it sees this one's result.
		if t.release != nil {
			t.release()
		}
		s.streamFinished(t.member, t.id, r)
	}
	if h, ok := t.rx.Header(); ok && h.Flags&i2wire.FlagVersion1 != 0 && t.sendDone == nil && why == "" {
		// Tradeoff: the connect-back runs after our receive.
		s.connectBackUDP(s.Context(), t, t.rx.Peer())
	}
	if t.sendDone == nil {
		// The source's slot is given back here, at once, as before: a
		// client that starts its next test as soon as its report
		// arrives must find it free. Handing the result on (the CPU
		// figure, the caller's OnResult: printing, saving) is not done
		// here: it can take long, and this is the reader of every test
		// on the port. Many tests end together, and their clients
		// re-send FINs every 10 ms until their reports arrive
		// (docs/server.md).
		if t.release != nil {
			t.release()
			t.release = nil
		}
		s.finishQ.Later(s.Server, finish)
		return
	}
	s.Go("udp: finishing the test of "+t.rx.Peer().String(), func() {
		<-t.sendDone
		finish()
	})
}
