package iperf2

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/stats"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// tcpTest is one TCP test on the server.
type tcpTest struct {
	id       int
	c        net.Conn
	peer     netip.AddrPort
	hdr      i2wire.ClientHeader
	hasHdr   bool
	first    []byte // bytes read before the data phase (flags and header)
	firstErr error  // why the first word could not be read whole
	res      *result.Result
	rx, tx   stats.Counters
	noBytes  bool
	member   *groupMember // its client's parallel streams (-P), if any
	reported bool         // its result was handed on
	// accepted is when the connection was taken from the listen queue:
	// no data byte arrived before it was established, so the receiver's
	// clock starts here (a clock started after reading and checking the
	// header would leave out the time the bytes already queued took to
	// arrive, and read above the wire).
	accepted time.Time
	// release gives back its admission slots (its source's and one of
	// --max-tests) before its result is handed on: a client that starts
	// its next test the moment it sees the result must find them free.
	release func()
}

// tcpModes are the directions a TCP test's header asks for.
type tcpModes struct {
	reverse     bool // -R: we send on the client's connection
	fullDuplex  bool // --full-duplex: both directions on it
	connectBack bool // -r/-d: we connect back to the client
	runNow      bool // -d: the connect-back runs from the start
}

// ServeTCP runs one TCP test (session.Fallback): read the header, if the
// first word announces one, acknowledge it when the spec says so, and
// receive, send or both as the header asks.
func (s *server) ServeTCP(ctx context.Context, c net.Conn, first []byte, firstErr error, accepted time.Time) {
	t := &tcpTest{c: c, peer: session.PeerOf(c), accepted: accepted, first: first, firstErr: firstErr}
	defer func() {
		if v := recover(); v != nil {
			s.LogPanic("tcp: "+t.peer.String(), v)
			if t.id != 0 && !t.reported {
				t.reported = true
				t.release()
				t.res.Error = fmt.Sprintf("internal error (panic: %v); see the server log", v)
				s.streamFinished(t.member, t.id, t.res)
			}
		}
	}()
	if err := s.readTCPHeader(t); err != nil {
		s.Log("tcp-header", fmt.Sprintf("tcp: %s: %v", t.peer, err))
	}
	m, bothModes := s.describeTCP(t)
	source, ok := s.AdmitSource("tcp", t.peer.Addr())
	if !ok {
		return
	}
	defer source()
	slot, ok := s.AdmitTCPTest("tcp", t.peer)
	if !ok {
		return // closed without an acknowledgement, as for a per-source limit
	}
	defer slot()
	t.release = func() { slot(); source() }
	if err := s.CheckReverse(t.peer.Addr()); err != nil && m.connectBack {
		// Closed without an acknowledgement: the client sees its test end.
		s.Log("refused-reverse", fmt.Sprintf("tcp: %s: refused a -r/-d test: %v", t.peer, err))
		s.RefuseTest(t.res, err)
		return
	}
	if bothModes {
		t.res.Warn("the client's header asked for both reverse (-R) and full duplex; ran full duplex")
	}
	if d, ok := t.hdr.Duration(); ok && (m.reverse || m.fullDuplex || m.connectBack) {
		s.sendCaps("tcp", t.res, t.peer, 0, d) // said; sendDuration cuts it
	}
	t.id = s.NewTest(t.res)
	session.Hook("tcp-test", t.peer)
	s.ackHeader(t)
	s.runTCP(ctx, t, m)
}

// describeTCP starts t's result from its header (or its lack of one) and
// says which directions the test runs; bothModes says the header asked
// for both -R and full duplex, of which full duplex is honoured.
func (s *server) describeTCP(t *tcpTest) (m tcpModes, bothModes bool) {
	dialect := session.DialectRaw
	if i2wire.IsFlaglessTCPHeader(t.first) { // 2.0.5's or lwiperf's header, flags 0: counted as data
		dialect = session.DialectIperf2Legacy
	}
	if t.hasHdr {
		dialect = session.DialectIperf2Legacy
		if t.hdr.HasExtension() {
			dialect = session.DialectIperf2
		}
	}
	t.res = session.NewServerResult(result.TCP, dialect, t.peer, s.Port())
	s.RecordSocket(t.res, t.c, nil)
	t.res.Version = session.VersionString()
	h := t.hdr
	m.reverse = t.hasHdr && h.Flags&i2wire.FlagVersion2 != 0 && h.UpperFlags&i2wire.UpperReverse != 0
	m.fullDuplex = t.hasHdr && h.Flags&i2wire.FlagVersion2 != 0 && h.UpperFlags&i2wire.UpperFullDuplex != 0
	bothModes = m.reverse && m.fullDuplex
	if bothModes {
		// No iperf sends both; full duplex already includes the reverse
		// direction, so it is the one honoured.
		m.reverse = false
	}
	m.connectBack = t.hasHdr && h.Flags&i2wire.FlagVersion1 != 0
	m.runNow = m.connectBack && h.Flags&i2wire.FlagRunNow != 0
	if t.hasHdr {
		t.res.Test.PeerVersion = i2wire.VersionString(h.VersionU, h.VersionL)
		if d, ok := h.Duration(); ok {
			t.res.Test.Duration = d.Seconds()
		}
		if n, ok := h.ByteCount(); ok {
			t.res.Test.Bytes = n
		}
		t.res.Test.Streams = max(int(h.NumThreads), 1)
		t.res.Test.Length = int(h.BufLen)
	}
	switch {
	case m.reverse:
		t.res.Test.Direction, t.res.Test.Mode = result.DirSend, "reverse"
	case m.fullDuplex:
		t.res.Test.Direction, t.res.Test.Mode = result.DirBidir, "full-duplex"
	case m.runNow:
		t.res.Test.Direction, t.res.Test.Mode = result.DirBidir, "dual"
	case m.connectBack:
		t.res.Test.Mode = "tradeoff"
	}
	return m, bothModes
}

// ackHeader acknowledges t's header when its flags ask for it.
func (s *server) ackHeader(t *tcpTest) {
	if !t.hasHdr || !i2wire.NeedsClientHdrAck(t.hdr.Flags) {
		return
	}
	_ = t.c.SetWriteDeadline(time.Now().Add(s.cfg.HeaderTimeout))
	if _, err := t.c.Write(i2wire.AppendClientHdrAck(nil)); err != nil {
		t.res.Warn("could not send the header acknowledgement: " + err.Error())
	}
	_ = t.c.SetWriteDeadline(time.Time{})
}

// tcpIntervals starts t's interval reports, from start, over the flows
// its modes run (joining its client's group of parallel streams when it
// only receives).
func (s *server) tcpIntervals(ctx context.Context, t *tcpTest, m tcpModes, start time.Time) *engine.Intervals {
	var flows []*engine.Flow
	if !m.reverse {
		flows = append(flows, &engine.Flow{Counters: []*stats.Counters{&t.rx}})
	}
	if m.reverse || m.fullDuplex {
		name := ""
		if m.fullDuplex {
			name, flows[0].Name = "reverse", "forward"
		}
		flows = append(flows, &engine.Flow{Name: name, Counters: []*stats.Counters{&t.tx}, TCP: []net.Conn{t.c}, Sender: true})
	}
	emit := s.Interval(t.id)
	if !m.reverse && !m.fullDuplex && !m.connectBack {
		t.member = s.joinGroup(ctx, result.TCP, t.peer, t.hdr, t.hasHdr, t.id, start, &t.rx)
		emit = s.emitter(t.member, t.id)
	}
	iv := engine.NewIntervals(start, s.cfg.Interval, emit, flows...)
	if d, ok := t.hdr.Duration(); t.hasHdr && ok && d > 0 {
		// The last row is Stop's, once the counting ended: none is
		// printed at the test's end while bytes still arrive.
		iv.SetEnd(min(d, s.cfg.MaxDuration))
	}
	return iv
}

// runTCP runs an admitted test's directions and hands its result on.
func (s *server) runTCP(ctx context.Context, t *tcpTest, m tcpModes) {
	// The test's clock (its intervals, the receiver's seconds, the
	// end of what it sends) starts when the connection was accepted.
	start := t.accepted
	if start.IsZero() {
		start = time.Now()
	}
	iv := s.tcpIntervals(ctx, t, m, start)
	ivCtx, ivEnd := context.WithCancel(ctx) // ends the reports should this test panic before Stop
	defer ivEnd()
	iv.Run(ivCtx)

	var wg sync.WaitGroup
	var back *result.Flow
	if m.runNow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.RecoverPanic("tcp connect-back to " + t.peer.String())
			back = s.connectBackTCP(ctx, t)
		}()
	}
	var sent session.TCPSent
	if m.reverse || m.fullDuplex {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Catch("tcp send to "+t.peer.String(), func() error {
				sent = s.sendTCP(ctx, t, m.reverse, true, start.Add(s.sendDuration(t)))
				return sent.Err
			}); err != nil && sent.Err == nil {
				sent.Err = err
			}
		}()
	}
	got, recvErr := s.receiveTCP(ctx, t, m, start)
	var intervals []result.Interval
	stopped := false
	if m.connectBack && !m.reverse && !m.fullDuplex {
		// Our receive is over; the connect-back (after it with -r,
		// running since the start with -d) is a flow of its own and must
		// not stretch this one's intervals.
		intervals, stopped = iv.Stop(countedUntil(time.Now(), got.End)), true
		if !m.runNow {
			back = s.connectBackTCP(ctx, t)
		}
	}
	wg.Wait()
	if !stopped {
		// The intervals end when the counting did (the last byte read,
		// the last write), not after what the test's end waited for.
		intervals = iv.Stop(countedUntil(time.Now(), got.End, sent.Res.End))
	}
	t.res.Intervals = intervals
	s.fillTCPResult(t, m, start, got, recvErr, sent)
	if back != nil {
		t.res.Reverse = back
	}
	t.reported = true
	t.release()
	s.streamFinished(t.member, t.id, t.res)
}

// receiveTCP receives t's data until the client closes (or, for -R, only
// drains what it sends until then), and answers a wirebench client's ask
// for our count.
func (s *server) receiveTCP(ctx context.Context, t *tcpTest, m tcpModes, start time.Time) (engine.TCPResult, error) {
	c := t.c
	if m.reverse {
		// Drain whatever the client sends (nothing, normally) until it
		// closes, so its FIN is read.
		_ = c.SetReadDeadline(time.Now().Add(s.sendDuration(t) + 10*time.Second))
		_, _ = io.Copy(io.Discard, c)
		return engine.TCPResult{}, nil
	}
	got, recvErr := engine.ReceiveTCP(ctx, c, 128<<10, s.cfg.IdleTimeout, t.first, &t.rx)
	if recvErr == nil && t.hdr.Reserved == i2wire.ReservedAskTCPReport && !m.fullDuplex && !m.connectBack {
		// A wirebench client asked for our count (tcpreport.go); it
		// reads it after its FIN.
		rep := i2wire.TCPReport{Bytes: got.Bytes, Elapsed: got.End.Sub(start)}
		_ = c.SetWriteDeadline(time.Now().Add(s.cfg.HeaderTimeout))
		_, _ = c.Write(rep.AppendTo(nil))
	}
	return got, recvErr
}

// fillTCPResult puts what t received and sent into its result.
func (s *server) fillTCPResult(t *tcpTest, m tcpModes, start time.Time, got engine.TCPResult, recvErr error, sent session.TCPSent) {
	r := t.res
	if !m.reverse {
		rr := &result.Receiver{Bytes: got.Bytes, Seconds: got.End.Sub(start).Seconds(), Source: "local"}
		if rr.Seconds > 0 {
			rr.BitsPerSecond = float64(rr.Bytes) * 8 / rr.Seconds
		}
		r.Receiver = rr
		if errors.Is(recvErr, engine.ErrIdle) {
			if got.Bytes == 0 {
				s.Log("tcp-silent", fmt.Sprintf("tcp: %s connected and sent nothing for %v; closed", t.peer, s.cfg.IdleTimeout))
			}
			r.Warn(fmt.Sprintf("the client went silent for %v without closing; the test ended on the idle timeout", s.cfg.IdleTimeout))
		} else if recvErr != nil {
			r.Error = "receiving: " + recvErr.Error()
		}
	}
	if m.reverse || m.fullDuplex {
		r.Sender = sent.Sender()
		session.WarnDelivery(r, sent)
		if sent.Err != nil && r.Error == "" {
			r.Error = "sending: " + sent.Err.Error()
		}
	}
}

// readTCPHeader reads, after the first word, the rest of the header when
// the word announces one. Bytes read count as received data (2.1.8 counts
// them too).
func (s *server) readTCPHeader(t *tcpTest) error {
	c := t.c
	if err := t.firstErr; err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil // a header-less stream that has not started yet
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		return fmt.Errorf("reading the test header: %w", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(s.cfg.HeaderTimeout))
	defer c.SetReadDeadline(time.Time{})
	flags := binary.BigEndian.Uint32(t.first)
	if flags&(i2wire.FlagBounceback|i2wire.FlagKeyCheck) != 0 {
		// Checked first: a bounceback header has none of the bits that
		// announce a client header, and would pass silently as data.
		return fmt.Errorf("the client asked for bounceback or a permit key (flags %08x), which this server does not do; counting the stream as data", flags)
	}
	hl := i2wire.ClientHeaderLen(flags, false)
	if hl == 0 { // plain data: zperf, ESP-IDF, or 2.0.5's header with flags 0, which describeTCP tells by 24 bytes
		rest := make([]byte, i2wire.ClientHeaderV1Len-4)
		m, _ := io.ReadFull(c, rest) // a stream that ends or pauses sooner is data all the same
		t.first = append(t.first, rest[:m]...)
		return nil
	}
	if hl < i2wire.ClientHeaderV1Len || hl > i2wire.MaxHeaderLen {
		// The LEN field can announce 0..255 bytes; fewer than the v1
		// header cannot be a header (and fewer than the 4 flag bytes
		// already read would be a negative read).
		return fmt.Errorf("the flags (%08x) announce a %d-byte test header, outside %d..%d; counting the stream as data",
			flags, hl, i2wire.ClientHeaderV1Len, i2wire.MaxHeaderLen)
	}
	rest := make([]byte, hl-4)
	m, err := io.ReadFull(c, rest)
	t.first = append(t.first, rest[:m]...)
	if err != nil {
		return fmt.Errorf("reading the %d-byte test header (got %d): %w", hl, 4+m, err)
	}
	h, _, err := i2wire.ParseClientHeader(t.first)
	if err != nil {
		return fmt.Errorf("malformed test header, counting it as data: %w", err)
	}
	t.hdr, t.hasHdr = h, true
	return nil
}

// countedUntil is the latest of the times a stream's counting ended, or
// fallback when none is set (or one is after it).
func countedUntil(fallback time.Time, ends ...time.Time) time.Time {
	var end time.Time
	for _, t := range ends {
		if t.After(end) {
			end = t
		}
	}
	if end.IsZero() || end.After(fallback) {
		return fallback
	}
	return end
}

// sendDuration is how long the server sends for a test: what the client
// asked, capped by MaxDuration.
func (s *server) sendDuration(t *tcpTest) time.Duration {
	d, ok := t.hdr.Duration()
	if !ok || d > s.cfg.MaxDuration {
		d = s.cfg.MaxDuration
	}
	return d
}

// maxTCPWrite caps the write size a client header can ask the server for.
const maxTCPWrite = 1 << 20

// tcpPattern is the digit pattern every server-side TCP send writes from:
// one read-only copy for all of them, so no header can make a test cost
// more than its socket.
var tcpPattern = sync.OnceValue(func() []byte {
	b := make([]byte, maxTCPWrite)
	session.FillPattern(b)
	return b
})

// sendTCP sends the digit pattern on the test's connection (-R,
// --full-duplex, or a connect-back), shuts the write side down when
// closeWrite is set, and waits for the client to acknowledge it; accepted
// is false for a connect-back, which we opened. No write runs past end
// (the test's clock, which started before this sender), or when end is
// zero, past the sender's own start plus the test's duration.
func (s *server) sendTCP(ctx context.Context, t *tcpTest, closeWrite, accepted bool, end time.Time) session.TCPSent {
	// The header may ask for writes of up to 2 GiB: clamp. The writes
	// come from the one shared pattern, never a buffer of their own.
	n := session.DefaultTCPLength
	if t.hdr.BufLen > 0 {
		n = min(int(t.hdr.BufLen), maxTCPWrite)
	}
	cfg := engine.TCPSendConfig{Buffer: tcpPattern()[:n], Duration: s.sendDuration(t), End: end}
	if n, ok := t.hdr.ByteCount(); ok {
		cfg.Bytes = n
	}
	return session.SendTCPDelivered(ctx, t.c, false, cfg, &t.tx, closeWrite, nil, engine.DrainOptions{Accepted: accepted})
}

// connectBackTCP runs the legacy -r/-d connect-back: a new connection to
// the client's own address (never any other) on the port its header names,
// carrying the digit pattern without a header.
func (s *server) connectBackTCP(ctx context.Context, t *tcpTest) *result.Flow {
	port := int(t.hdr.Port)
	if port <= 0 || port > 65535 {
		port = s.Port()
	}
	if err := s.SelfTarget(netip.AddrPortFrom(t.peer.Addr(), uint16(port))); err != nil {
		t.res.Warn(err.Error())
		s.Log("self", "tcp: "+err.Error())
		return nil
	}
	dst := net.JoinHostPort(t.peer.Addr().String(), strconv.Itoa(port))
	dial := func(ctx context.Context, dst string) (net.Conn, error) {
		return dialConnectBack(ctx, dst, s.cfg.Socket)
	}
	if s.testDialBack != nil {
		dial = s.testDialBack
	}
	c, err := dial(ctx, dst)
	if err != nil {
		t.res.Warn(fmt.Sprintf("connect-back to %s failed: %v", dst, err))
		return nil
	}
	defer c.Close()
	bt := &tcpTest{c: c, hdr: t.hdr}
	sent := s.sendTCP(ctx, bt, true, false, time.Time{}) // its own clock: -r runs it after the test
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, _ = io.Copy(io.Discard, tc)
	}
	session.WarnDelivery(t.res, sent)
	if sent.Err != nil {
		t.res.Warn("connect-back stream: " + sent.Err.Error())
	}
	return &result.Flow{Direction: result.DirSend, Sender: sent.Sender()}
}

// connectBackRetry is how long a refused connect-back is retried: an
// iperf 2.1.8 client asking for -d opens its -L listener only after its
// own connection is up, so our immediate dial can come first and be
// refused.
const connectBackRetry = 2 * time.Second

// dialConnectBack dials the client's -r/-d listener, retrying every 20 ms
// while it refuses, for up to connectBackRetry.
func dialConnectBack(ctx context.Context, dst string, so sockopt.Options) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, Control: so.Control()}
	giveUp := time.Now().Add(connectBackRetry)
	for {
		c, err := d.DialContext(ctx, "tcp", dst)
		if err == nil || !session.IsRefused(err) || time.Now().After(giveUp) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}
