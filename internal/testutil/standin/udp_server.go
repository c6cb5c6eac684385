package standin

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"time"
)

// UDPServerOptions configures a UDP stand-in server.
type UDPServerOptions struct {
	// BufLen is the 2.0.5 server's buffer length: datagrams are read into
	// it and the report reply is exactly this long (default 1470, §1.5).
	BufLen int
	// AckTries and AckWait are the 2.0.5 report loop: send the report, wait
	// AckWait for silence, re-send on any late datagram, at most AckTries
	// sends (defaults 10 and 1 s, §1.5).
	AckTries int
	AckWait  time.Duration
	// Linger is how long a zperf server keeps answering late FINs after its
	// first report before returning (default 250 ms).
	Linger time.Duration
	// Idle ends a session that has started but sends nothing for this long
	// (an ESP-IDF client never sends a FIN). 0 waits for the context.
	Idle time.Duration
	// UptimeAtStart is the zperf server's uptime when it starts (default
	// 1000 s); zperf computes transit times against uptime (§5.1).
	UptimeAtStart time.Duration
	// MaxPackets caps the datagrams read (default 1<<20).
	MaxPackets int64
	// Mute keeps the report off the wire (it is still made and recorded
	// in Replies): a firmware whose server prints its figures on its own
	// console and answers nothing.
	Mute bool
	// FramesPerSecond, above 0, makes a device with a frame-rate limit:
	// it serves one data datagram every 1/FramesPerSecond from a queue of
	// FrameQueue datagrams (default 200 ms' worth, at least 16: a stand-in read late by its host keeps its datagrams) and drops
	// what arrives to a full queue, uncounted, as a device past its limit
	// does. A datagram counts as arrived when it is served (its time is
	// the server's), and the FIN waits behind the queue, so the server's
	// window is the device's own pace.
	FramesPerSecond float64
	FrameQueue      int
}

// UDPServerResult is what a UDP stand-in server counted and sent.
type UDPServerResult struct {
	Dialect  string
	Peer     net.Addr // the client (first sender); others are ignored
	Received int64    // datagrams read from the peer, FINs included
	IDs      []int32  // id word of every datagram from the peer, arrival order
	Ignored  int      // datagrams ignored: other senders, too short, after the session

	// The peer's own counters, as it put them in its report.
	Counted    int64  // datagrams the peer counted (dialect rule)
	Bytes      uint64 // bytes the peer counted
	Total      int32  // report "datagrams"
	Lost       int32  // report error_cnt
	OutOfOrder int32  // report outorder_cnt
	JitterUS   int64  // jitter in µs as reported (jitter1*1e6 + jitter2)
	Duration   time.Duration
	FINID      int32 // id of the FIN that ended the session

	Completed bool         // a FIN arrived and was answered
	TimedOut  bool         // Idle expired with no FIN
	Report    ServerReport // the report as put on the wire
	Replies   [][]byte     // exact bytes of every reply sent, in order
	LateFINs  int          // datagrams that arrived after the first report
	Limited   int64        // data datagrams the frame-rate limit dropped
}

func (o UDPServerOptions) withDefaults() UDPServerOptions {
	if o.BufLen == 0 {
		o.BufLen = defaultUDPLen
	}
	if o.AckTries == 0 {
		o.AckTries = 10
	}
	if o.AckWait == 0 {
		o.AckWait = time.Second
	}
	if o.Linger == 0 {
		o.Linger = 250 * time.Millisecond
	}
	if o.UptimeAtStart == 0 {
		o.UptimeAtStart = 1000 * time.Second
	}
	if o.MaxPackets == 0 {
		o.MaxPackets = defaultMaxPkts
	}
	return o
}

// udpServe is the loop shared by the UDP servers: it reads datagrams from
// the first peer and hands them to handle until handle reports done.
type udpServe struct {
	ctx     context.Context
	conn    net.PacketConn
	o       UDPServerOptions
	res     *UDPServerResult
	started bool
	limit   frameLimit
}

// frameLimit is UDPServerOptions.FramesPerSecond's queue: next is when
// the last datagram queued is served.
type frameLimit struct{ next time.Time }

// admit runs a datagram with id that arrived at at through the frame-rate
// limit: when it is served, or false when the queue is full (without a
// limit: at once).
func (s *udpServe) admit(id int32, at time.Time) (time.Time, bool) {
	rate := s.o.FramesPerSecond
	if rate <= 0 {
		return at, true
	}
	depth := s.o.FrameQueue
	if depth <= 0 {
		depth = max(16, int(rate/5))
	}
	slot := time.Duration(float64(time.Second) / rate)
	l := &s.limit
	if l.next.Before(at) {
		l.next = at // idle: served as it arrives
	}
	if id < 0 {
		return l.next, true // the FIN, behind what is queued
	}
	if int(l.next.Sub(at)/slot) >= depth {
		s.res.Limited++
		return at, false
	}
	l.next = l.next.Add(slot)
	return l.next, true
}

// read returns the next datagram from the peer; timeout bounds the wait
// (0: the context). ok is false on timeout. With a frame-rate limit, at is
// when the device served it.
func (s *udpServe) read(buf []byte, timeout time.Duration) (n int, at time.Time, ok bool, err error) {
	for s.res.Received+int64(s.res.Ignored) < s.o.MaxPackets {
		var dl time.Time
		if timeout > 0 {
			dl = time.Now().Add(timeout)
		}
		if err := s.conn.SetReadDeadline(dl); err != nil {
			return 0, at, false, fmt.Errorf("set read deadline: %w", err)
		}
		n, from, err := s.conn.ReadFrom(buf)
		at = time.Now()
		if s.ctx.Err() != nil {
			return 0, at, false, s.ctx.Err()
		}
		if err != nil {
			if isTimeout(err) {
				return 0, at, false, nil
			}
			return 0, at, false, fmt.Errorf("read: %w", err)
		}
		if s.res.Peer == nil {
			s.res.Peer = from
		} else if from.String() != s.res.Peer.String() {
			s.res.Ignored++
			continue
		}
		if n >= 4 {
			served, ok := s.admit(int32(binary.BigEndian.Uint32(buf)), at)
			if !ok {
				continue
			}
			at = served
		}
		s.res.Received++
		if n >= 4 {
			s.res.IDs = append(s.res.IDs, int32(binary.BigEndian.Uint32(buf)))
		}
		return n, at, true, nil
	}
	return 0, at, false, fmt.Errorf("more than %d datagrams", s.o.MaxPackets)
}

func (s *udpServe) reply(b []byte) error {
	s.res.Replies = append(s.res.Replies, append([]byte(nil), b...))
	if s.o.Mute {
		return nil
	}
	if _, err := s.conn.WriteTo(b, s.res.Peer); err != nil {
		return fmt.Errorf("send report: %w", err)
	}
	return nil
}

// listenUDP binds addr and starts run on it under a Server handle.
func listenUDP(ctx context.Context, addr, dialect string, o UDPServerOptions,
	run func(*udpServe) error) (*Server[UDPServerResult], error) {
	if _, err := needDeadline(ctx); err != nil {
		return nil, fmt.Errorf("%s server: %w", dialect, err)
	}
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s server: listen %s: %w", dialect, addr, err)
	}
	// The stand-in stands in for a device's protocol, not for its socket:
	// on a busy test machine its reader may be descheduled for a while, and
	// the default receive buffer (about 90 datagrams) would drop what a
	// 20 Mbit/s test sends meanwhile. Best effort: capped at rmem_max.
	_ = conn.(*net.UDPConn).SetReadBuffer(4 << 20)
	o = o.withDefaults()
	return startServer(conn.LocalAddr(), func() (UDPServerResult, error) {
		defer conn.Close()
		defer closeOnDone(ctx, conn)()
		res := UDPServerResult{Dialect: dialect}
		s := &udpServe{ctx: ctx, conn: conn, o: o, res: &res}
		if err := run(s); err != nil {
			return res, fmt.Errorf("%s server: %w", dialect, err)
		}
		return res, nil
	}), nil
}

// idleWait is the read timeout before and during a session.
func (s *udpServe) idleWait() time.Duration {
	if s.started {
		return s.o.Idle
	}
	return 0
}

// Legacy205UDPServer starts an iperf 2.0.5 UDP server on addr (§1.4–§1.6
// with the 2.0.5 differences of §1.6): every datagram's bytes count, id 0
// included; Total = |FIN id| (the highest id); a gap adds to lost, a lower id
// adds to out-of-order, lost is reported net of out-of-order (floored at 0);
// jitter is RFC 3550 over wall-clock transit times, skipping the first sample
// (id 0 takes no part). The reply is the server's whole buffer (BufLen bytes):
// the FIN's 12 header bytes, the report at 12 with flags 0x80000000, then
// stale buffer contents. It is re-sent on every late datagram, up to
// AckTries sends, until AckWait passes in silence.
func Legacy205UDPServer(ctx context.Context, addr string, o UDPServerOptions) (*Server[UDPServerResult], error) {
	return listenUDP(ctx, addr, "iperf-2.0.5", o, serveLegacy205)
}

// legacyStats is the 2.0.5 reporter state.
type legacyStats struct {
	packetID    int64 // highest id seen
	cntError    int64
	cntOutOrder int64
	lastTransit float64
	jitter      float64 // seconds
}

func (st *legacyStats) packet(id int64, transit float64) {
	if id == 0 {
		return
	}
	if st.lastTransit != 0 {
		st.jitter += (math.Abs(transit-st.lastTransit) - st.jitter) / 16
	}
	st.lastTransit = transit
	if id != st.packetID+1 {
		if id < st.packetID+1 {
			st.cntOutOrder++
		} else {
			st.cntError += id - st.packetID - 1
		}
	}
	st.packetID = max(st.packetID, id)
}

func serveLegacy205(s *udpServe) error {
	buf := make([]byte, s.o.BufLen) // kept across reads: the reply carries stale bytes
	var st legacyStats
	var start time.Time
	for {
		n, at, ok, err := s.read(buf, s.idleWait())
		if err != nil {
			return err
		}
		if !ok {
			s.res.TimedOut = true
			return nil
		}
		if n < legacyHdrLen {
			s.res.Ignored++
			continue
		}
		if !s.started {
			s.started, start = true, at
		}
		id := int32(binary.BigEndian.Uint32(buf))
		sent := time.Unix(int64(binary.BigEndian.Uint32(buf[4:])), int64(binary.BigEndian.Uint32(buf[8:]))*1000)
		s.res.Counted++
		s.res.Bytes += uint64(n)
		pid := int64(id)
		if id < 0 {
			pid = -pid
		}
		st.packet(pid, at.Sub(sent).Seconds())
		if id < 0 {
			s.res.FINID = id
			return s.legacy205Ack(buf, st, at.Sub(start))
		}
	}
}

func (s *udpServe) legacy205Ack(buf []byte, st legacyStats, dur time.Duration) error {
	lost := max(st.cntError-st.cntOutOrder, 0)
	j1 := math.Floor(st.jitter)
	rep := ServerReport{
		Flags:     flagVersion1,
		TotalLen1: uint32(s.res.Bytes >> 32), TotalLen2: uint32(s.res.Bytes),
		StopSec: uint32(dur / time.Second), StopUsec: uint32(dur % time.Second / time.Microsecond),
		ErrorCnt: int32(lost), OutOrderCnt: int32(st.cntOutOrder), Datagrams: int32(st.packetID),
		Jitter1: uint32(j1), Jitter2: uint32((st.jitter - j1) * 1e6),
	}
	s.setReport(rep, dur)
	rep.put(buf[legacyHdrLen:])
	reply := append([]byte(nil), buf...)
	scratch := make([]byte, maxDatagramRead)
	for try := 0; try < s.o.AckTries; try++ {
		if err := s.reply(reply); err != nil {
			return err
		}
		_, _, ok, err := s.read(scratch, s.o.AckWait)
		if err != nil || !ok {
			return err
		}
		s.res.LateFINs++
	}
	return nil
}

func (s *udpServe) setReport(rep ServerReport, dur time.Duration) {
	s.res.Report = rep
	s.res.Completed = true
	s.res.Total, s.res.Lost, s.res.OutOfOrder = rep.Datagrams, rep.ErrorCnt, rep.OutOrderCnt
	s.res.JitterUS = int64(rep.Jitter1)*1_000_000 + int64(rep.Jitter2)
	s.res.Duration = dur
}

// ZperfOldUDPServer starts a Zephyr zperf UDP receiver as it was before PR
// #88742 (§5.1, [S] zperf_udp_receiver.c): the first datagram only starts the
// session and is not counted; data datagrams (not the FIN) are counted;
// datagrams = packets counted; lost is the sum of id gaps with no
// out-of-order correction; total_len2 = length mod 0xFFFFFFFF (a zperf bug);
// jitter in integer µs over uptime-based transit times. The reply is 52
// bytes: the FIN's 12 header bytes, then the report with flags 0x80000000,
// jitter1 = 0, jitter2 = µs. Late FINs get the stored report again.
func ZperfOldUDPServer(ctx context.Context, addr string, o UDPServerOptions) (*Server[UDPServerResult], error) {
	return listenUDP(ctx, addr, "zperf-old", o, func(s *udpServe) error {
		return serveZperf(s, legacyHdrLen, false)
	})
}

// ZperfNewUDPServer starts a zperf UDP receiver after PR #88742 (§5.1): as
// the old one, but the first datagram is counted, datagrams = |FIN id| (the
// iperf meaning), a 64-id reorder window turns a late id that had been
// counted lost into an out-of-order one [I: window details inferred], and
// the reply echoes the FIN's 16 header bytes before the report (56 bytes).
func ZperfNewUDPServer(ctx context.Context, addr string, o UDPServerOptions) (*Server[UDPServerResult], error) {
	return listenUDP(ctx, addr, "zperf-new", o, func(s *udpServe) error {
		return serveZperf(s, modernHdrLen, true)
	})
}

// zperfSession is the zperf receiver's session state.
type zperfSession struct {
	nextID      int64
	errors      int64
	outorder    int64
	lastTransit int32
	jitter      int32 // µs
	missing     map[int64]bool
}

func (z *zperfSession) account(id int64, transit int32, window bool) {
	if z.lastTransit != 0 {
		d := transit - z.lastTransit
		if d < 0 {
			d = -d
		}
		z.jitter += (d - z.jitter) / 16
	}
	z.lastTransit = transit
	switch {
	case id == z.nextID:
		z.nextID++
	case id > z.nextID:
		z.errors += id - z.nextID
		if window {
			for m := max(z.nextID, id-64); m < id; m++ {
				z.missing[m] = true
			}
		}
		z.nextID = id + 1
	default:
		z.outorder++
		if window && z.missing[id] && id >= z.nextID-64 {
			delete(z.missing, id)
			z.errors--
		}
	}
	if window {
		for m := range z.missing {
			if m < z.nextID-64 {
				delete(z.missing, m)
			}
		}
	}
}

func serveZperf(s *udpServe, hdrLen int, isNew bool) error {
	buf := make([]byte, 1500) // UDP_RECEIVER_BUF_SIZE [S]
	z := zperfSession{nextID: 1, missing: map[int64]bool{}}
	var start, serverStart time.Time = time.Time{}, time.Now()
	var stored []byte // the report words, re-sent with each late FIN's header
	for {
		wait := s.idleWait()
		if stored != nil {
			wait = s.o.Linger
		}
		n, at, ok, err := s.read(buf, wait)
		if err != nil {
			return err
		}
		if !ok {
			s.res.TimedOut = stored == nil
			return nil
		}
		if n < hdrLen {
			s.res.Ignored++
			continue
		}
		id := int64(int32(binary.BigEndian.Uint32(buf)))
		switch {
		case stored != nil && id < 0:
			s.res.LateFINs++
			if err := s.reply(append(append([]byte(nil), buf[:hdrLen]...), stored...)); err != nil {
				return err
			}
			continue
		case stored != nil:
			s.res.Ignored++ // a new session: out of scope for a one-shot stand-in
			continue
		case !s.started && id < 0:
			s.res.LateFINs++ // FIN with no session: zperf answers with a zeroed stat
			if err := s.reply(make([]byte, hdrLen+serverHdrLen)); err != nil {
				return err
			}
			continue
		case !s.started:
			s.started, start = true, at
			if !isNew {
				continue
			}
		}
		if id >= 0 {
			s.res.Counted++
			s.res.Bytes += uint64(n)
			z.account(id, zperfTransit(buf, at.Sub(serverStart)+s.o.UptimeAtStart), isNew)
			continue
		}
		s.res.FINID = int32(id)
		stored = zperfReport(s, z, at.Sub(start), -id, isNew)
		if err := s.reply(append(append([]byte(nil), buf[:hdrLen]...), stored...)); err != nil {
			return err
		}
	}
}

// zperfTransit is zperf's time_delta(uptime µs, sender µs), in uint32
// arithmetic as the C code does it.
func zperfTransit(hdr []byte, uptime time.Duration) int32 {
	sent := binary.BigEndian.Uint32(hdr[4:])*1_000_000 + binary.BigEndian.Uint32(hdr[8:])
	return int32(uint32(uptime/time.Microsecond) - sent)
}

func zperfReport(s *udpServe, z zperfSession, dur time.Duration, finMag int64, isNew bool) []byte {
	rep := ServerReport{
		Flags:     flagVersion1,
		TotalLen1: uint32(s.res.Bytes >> 32),
		StopSec:   uint32(dur / time.Second), StopUsec: uint32(dur % time.Second / time.Microsecond),
		ErrorCnt: int32(z.errors), OutOrderCnt: int32(z.outorder),
		Datagrams: int32(s.res.Counted), Jitter2: uint32(z.jitter),
	}
	if isNew {
		rep.TotalLen2 = uint32(s.res.Bytes)
		rep.Datagrams = int32(finMag)
	} else {
		rep.TotalLen2 = uint32(s.res.Bytes % 0xFFFFFFFF)
	}
	s.setReport(rep, dur)
	b := make([]byte, serverHdrLen)
	rep.put(b)
	return b
}
