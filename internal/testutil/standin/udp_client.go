package standin

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"time"
)

// UDPClientOptions configures a UDP stand-in client. The zero value sends
// 1470-byte datagrams at 1 Mbit/s for 1 s.
type UDPClientOptions struct {
	// Count is the number of ids to generate (datagrams before impairment).
	// When 0, Duration bounds the run instead.
	Count int64
	// Duration bounds the data phase when Count is 0 (default 1 s).
	Duration time.Duration
	// RateBps is the offered rate in bit/s of UDP payload (default 1 Mbit/s);
	// a negative value sends unpaced.
	RateBps float64
	// Length is the UDP payload length (default 1470). When set explicitly,
	// 2.0.5 also reports it as mBufLen (§1.2).
	Length int
	// Impair is the damage plan applied to the data datagrams.
	Impair Impairment
	// Tradeoff (-r) and Dual (-d) set VERSION1 / VERSION1|RUN_NOW in the
	// 2.0.5 client header. The UDP connect-back itself is not served.
	Tradeoff, Dual bool
	// MPort is the port written as mPort (default: the server port).
	MPort int
	// FINTries and FINWait override the dialect's FIN retry policy.
	FINTries int
	FINWait  time.Duration
	// FirstID is the first sequence number of the ESP-IDF client (0, the
	// iperf-cmd component, or 1, the old example; §5.3).
	FirstID int64
	// UptimeAtStart is the zperf "time since boot" at the first datagram
	// (default 100 s); zperf timestamps are uptime, not wall clock (§5.1).
	UptimeAtStart time.Duration
	// UnixTimestamps makes the new zperf client use wall-clock timestamps
	// (its optional Unix offset, §5.1).
	UnixTimestamps bool
	// MaxPackets caps the ids generated, whatever Count/Duration say
	// (default 1<<20).
	MaxPackets int64
	// LocalPort is the source port to send from (0: any the kernel picks),
	// so a test can make two runs share a source as the kernel may.
	LocalPort int
}

// UDPClientResult is everything a UDP stand-in client sent and observed.
type UDPClientResult struct {
	Dialect string
	Local   net.Addr
	Remote  net.Addr

	Generated   int64   // ids generated (n); the FIN id is derived from it
	IDsSent     []int64 // data datagram ids in send order (repeats included)
	DataPackets int64   // data datagrams sent (len(IDsSent))
	DataBytes   int64   // UDP payload bytes of data datagrams
	SendErrors  int     // failed writes (not in IDsSent)
	Injected    Injected

	FirstDatagram []byte // exact bytes of the first data datagram sent
	FINID         int32  // id carried by the FIN (0 if the dialect sends none)
	FINDatagram   []byte // exact bytes of the (first) FIN datagram
	FINSends      int    // how many times a FIN was sent
	FINBytes      int64  // payload bytes of all FINs

	Replies  [][]byte // every reply datagram read, full length
	ReadErrs []error  // errors reading replies (refused, …)

	// ReportBytes is the reply as the peer reads it (zperf reads into a
	// 52/56-byte buffer and truncates), Report the report parsed the way
	// the peer parses it, ReportAccepted whether the peer would print it,
	// ReportNote why not or what is odd.
	ReportBytes    []byte
	Report         *ServerReport
	ReportAccepted bool
	ReportNote     string
}

// udpDialect is what differs between the UDP client dialects.
type udpDialect struct {
	name     string
	hdrLen   int   // where the client header starts (12/16); ESP: 4
	firstID  int64 // first sequence number
	noFIN    bool
	finID    func(n int64) int32
	finTries int
	finWait  time.Duration
	prepare  func(buf []byte, o UDPClientOptions, port int) // fill + client header
	finHdr   func(buf []byte)                               // header rewrite for the FIN
	stamp    func(now, start time.Time, o UDPClientOptions) (uint32, uint32)
	readLen  int // reply bytes the peer reads (0: all)
	parse    func(reply []byte) (*ServerReport, bool, string)
}

// Legacy205UDPClient emulates an iperf 2.0.5 UDP client (§1.1 legacy layout,
// §1.2, §1.4, §1.5): 12-byte header, ids from 0, wall-clock timestamps,
// client_hdr_v1 at 12 in every datagram (flags 0, VERSION1 for -r,
// VERSION1|RUN_NOW for -d; rate in mWinBand), the rest of the buffer the
// digit pattern. The FIN carries −n and is re-sent with the same id up to 10
// times, waiting 250 ms each, until any reply arrives. The reply is accepted
// only if it is ≥ 52 bytes with VERSION1 at offset 12, and is parsed at 12.
func Legacy205UDPClient(ctx context.Context, addr string, o UDPClientOptions) (UDPClientResult, error) {
	explicitLen := o.Length != 0
	d := udpDialect{
		name: "iperf-2.0.5", hdrLen: legacyHdrLen, firstID: 0,
		finID:    func(n int64) int32 { return -int32(n) },
		finTries: 10, finWait: 250 * time.Millisecond,
		prepare: func(buf []byte, o UDPClientOptions, port int) {
			digitPattern(buf, 0)
			h := ClientHdrV1{NumThreads: 1, MPort: uint32(mportOr(o.MPort, port)),
				WinBand: uint32(o.RateBps), Amount: amountField(o.Duration, o.Count*int64(o.Length))}
			if o.RateBps < 0 {
				h.WinBand = 0
			}
			if explicitLen {
				h.BufLen = uint32(o.Length)
			}
			switch {
			case o.Dual:
				h.Flags = flagVersion1 | flagRunNow
			case o.Tradeoff:
				h.Flags = flagVersion1
			}
			h.put(buf[legacyHdrLen:])
		},
		stamp: func(now, _ time.Time, _ UDPClientOptions) (uint32, uint32) { return wallStamp(now) },
		parse: parseLegacy205Reply,
	}
	return runUDPClient(ctx, addr, d, o)
}

func parseLegacy205Reply(b []byte) (*ServerReport, bool, string) {
	if len(b) < legacyHdrLen+serverHdrLen {
		return nil, false, fmt.Sprintf("reply of %d bytes < 52: no server report", len(b))
	}
	r, _ := ParseServerReport(b, legacyHdrLen)
	if r.Flags&flagVersion1 == 0 {
		return &r, false, fmt.Sprintf("flags at 12 are %08x, VERSION1 missing: no server report", r.Flags)
	}
	return &r, true, ""
}

// putZperfHdr writes the zperf client header (§5.1, [S] zperf UDP
// uploader): flags 0, numThreads 1, port, buffer_len in host order
// (little-endian on the boards: a zperf quirk), bandwidth in kbit/s and
// num_of_bytes = packet size. The rest of the datagram is 'z'.
func putZperfHdr(b []byte, port, bufLen, kbps, size uint32) {
	binary.BigEndian.PutUint32(b[0:], 0)
	binary.BigEndian.PutUint32(b[4:], 1)
	binary.BigEndian.PutUint32(b[8:], port)
	binary.LittleEndian.PutUint32(b[12:], bufLen)
	binary.BigEndian.PutUint32(b[16:], kbps)
	binary.BigEndian.PutUint32(b[20:], size)
}

func zperfDialect(name string, hdrLen int, firstID int64, bufLen uint32, tries int) udpDialect {
	return udpDialect{
		name: name, hdrLen: hdrLen, firstID: firstID,
		finTries: tries, finWait: 2 * time.Second,
		prepare: func(buf []byte, o UDPClientOptions, port int) {
			for i := range buf {
				buf[i] = 'z'
			}
			kbps := uint32(o.RateBps / 1000)
			if o.RateBps < 0 {
				kbps = 0
			}
			putZperfHdr(buf[hdrLen:], uint32(port), bufLen, kbps, uint32(len(buf)))
		},
		finHdr: func(buf []byte) {
			// The FIN rewrites the header with port 0 and bandwidth 0 [S].
			putZperfHdr(buf[hdrLen:], 0, bufLen, 0, uint32(len(buf)))
		},
		stamp:   zperfStamp,
		readLen: hdrLen + serverHdrLen,
		parse: func(b []byte) (*ServerReport, bool, string) {
			note := ""
			if len(b) < hdrLen+serverHdrLen {
				// zperf only warns "Network packet too short" and
				// decodes the stale zeroed buffer anyway [S].
				note = fmt.Sprintf("network packet too short (%d bytes)", len(b))
				full := make([]byte, hdrLen+serverHdrLen)
				copy(full, b)
				b = full
			}
			r, _ := ParseServerReport(b, hdrLen)
			return &r, true, note
		},
	}
}

// zperfStamp gives zperf's uptime timestamps (or wall clock with the new
// client's Unix offset).
func zperfStamp(now, start time.Time, o UDPClientOptions) (uint32, uint32) {
	if o.UnixTimestamps {
		return wallStamp(now)
	}
	up := now.Sub(start) + o.UptimeAtStart
	return uint32(up / time.Second), uint32(up % time.Second / time.Microsecond)
}

// ZperfOldUDPClient emulates the Zephyr zperf UDP uploader before PR #88742
// (§5.1, §1.4): legacy 12-byte header, ids from 0, uptime timestamps, 'z'
// fill with the zperf client header at 12, FIN = −n tried twice with a 2 s
// receive timeout; the first reply is read into a 52-byte buffer and decoded
// at 12 without any check of its flags.
func ZperfOldUDPClient(ctx context.Context, addr string, o UDPClientOptions) (UDPClientResult, error) {
	d := zperfDialect("zperf-old", legacyHdrLen, 0, 1024-legacyHdrLen-clientHdrV1Len, 2)
	d.finID = func(n int64) int32 { return -int32(n) }
	return runUDPClient(ctx, addr, d, o)
}

// ZperfNewUDPClient emulates the zperf UDP uploader after PR #88742 (§5.1,
// §1.1, §1.4): 16-byte header with id2 left as the 'zzzz' fill, ids from 1,
// uptime timestamps (wall clock with UnixTimestamps), FIN = −(n+1) with a
// configurable number of tries (default 5 [I]) of 2 s each; the reply is read
// into a 56-byte buffer and decoded at 16 without checking its flags.
func ZperfNewUDPClient(ctx context.Context, addr string, o UDPClientOptions) (UDPClientResult, error) {
	d := zperfDialect("zperf-new", modernHdrLen, 1, 1024, 5)
	d.finID = func(n int64) int32 { return -int32(n + 1) }
	return runUDPClient(ctx, addr, d, o)
}

// ESPUDPClient emulates the ESP-IDF iperf UDP client (§5.3): zero-filled
// datagrams (default 1470 bytes) with only a 32-bit big-endian sequence
// number at offset 0 starting at FirstID, zero timestamps, no FIN, and it
// reads nothing.
func ESPUDPClient(ctx context.Context, addr string, o UDPClientOptions) (UDPClientResult, error) {
	d := udpDialect{
		name: "esp-idf", hdrLen: 4, firstID: o.FirstID, noFIN: true,
		prepare: func(buf []byte, _ UDPClientOptions, _ int) { clear(buf) },
		stamp:   func(time.Time, time.Time, UDPClientOptions) (uint32, uint32) { return 0, 0 },
	}
	return runUDPClient(ctx, addr, d, o)
}

func mportOr(m, port int) int {
	if m != 0 {
		return m
	}
	return port
}

func (o UDPClientOptions) withDefaults() UDPClientOptions {
	if o.Length == 0 {
		o.Length = defaultUDPLen
	}
	if o.Count == 0 && o.Duration == 0 {
		o.Duration = time.Second
	}
	if o.RateBps == 0 {
		o.RateBps = defaultRateBps
	}
	if o.MaxPackets == 0 {
		o.MaxPackets = defaultMaxPkts
	}
	if o.UptimeAtStart == 0 {
		o.UptimeAtStart = 100 * time.Second
	}
	return o
}

// udpClientRun is the state of one UDP stand-in client run.
type udpClientRun struct {
	ctx   context.Context
	d     udpDialect
	o     UDPClientOptions
	conn  *net.UDPConn
	buf   []byte
	start time.Time
	next  time.Time
	gap   time.Duration
	res   UDPClientResult
}

func runUDPClient(ctx context.Context, addr string, d udpDialect, o UDPClientOptions) (UDPClientResult, error) {
	res := UDPClientResult{Dialect: d.name}
	if _, err := needDeadline(ctx); err != nil {
		return res, fmt.Errorf("%s client: %w", d.name, err)
	}
	o = o.withDefaults()
	if o.Length < d.hdrLen+clientHdrV1Len && d.name != "esp-idf" || o.Length < 4 || o.Length > maxDatagramRead-1 {
		return res, fmt.Errorf("%s client: length %d out of range", d.name, o.Length)
	}
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return res, fmt.Errorf("%s client: resolve %q: %w", d.name, addr, err)
	}
	var laddr *net.UDPAddr
	if o.LocalPort != 0 {
		laddr = &net.UDPAddr{IP: raddr.IP, Port: o.LocalPort}
	}
	conn, err := net.DialUDP("udp", laddr, raddr)
	if err != nil {
		return res, fmt.Errorf("%s client: dial %s: %w", d.name, addr, err)
	}
	defer conn.Close()
	defer closeOnDone(ctx, conn)()
	r := &udpClientRun{ctx: ctx, d: d, o: o, conn: conn, buf: make([]byte, o.Length), res: res}
	r.res.Local, r.res.Remote = conn.LocalAddr(), conn.RemoteAddr()
	d.prepare(r.buf, o, raddr.Port)
	if o.RateBps > 0 {
		r.gap = time.Duration(float64(o.Length*8) / o.RateBps * float64(time.Second))
	}
	if err := r.sendData(); err != nil {
		return r.res, err
	}
	if d.noFIN {
		return r.res, nil
	}
	return r.res, r.finExchange()
}

// sendData generates ids, applies the impairment plan and paces the sends.
func (r *udpClientRun) sendData() error {
	sched := newScheduler(r.o.Impair)
	r.start = time.Now()
	r.next = r.start
	for r.res.Generated < r.o.MaxPackets {
		if r.o.Count > 0 && r.res.Generated >= r.o.Count {
			break
		}
		if r.o.Count == 0 && time.Since(r.start) >= r.o.Duration {
			break
		}
		id := r.d.firstID + r.res.Generated
		r.res.Generated++
		for _, s := range sched.next(id) {
			if err := r.sendOne(s); err != nil {
				return err
			}
		}
	}
	for _, s := range sched.flush() {
		if err := r.sendOne(s); err != nil {
			return err
		}
	}
	r.res.Injected = sched.injected
	return nil
}

func (r *udpClientRun) sendOne(id int64) error {
	if r.gap > 0 {
		if !sleepUntil(r.ctx, r.next) {
			return fmt.Errorf("%s client: sending data: %w", r.d.name, r.ctx.Err())
		}
		r.next = r.next.Add(r.gap)
	}
	if r.ctx.Err() != nil {
		return fmt.Errorf("%s client: sending data: %w", r.d.name, r.ctx.Err())
	}
	sec, usec := r.d.stamp(time.Now(), r.start, r.o)
	if r.d.noFIN { // ESP: only the 32-bit id at 0
		binary.BigEndian.PutUint32(r.buf, uint32(id))
	} else {
		putStamp(r.buf, int32(id), sec, usec)
	}
	n, err := r.conn.Write(r.buf)
	if err != nil {
		r.res.SendErrors++
		return nil
	}
	if r.res.FirstDatagram == nil {
		r.res.FirstDatagram = append([]byte(nil), r.buf...)
	}
	r.res.IDsSent = append(r.res.IDsSent, id)
	r.res.DataPackets++
	r.res.DataBytes += int64(n)
	return nil
}

// finExchange sends the FIN (the same datagram each try) and reads the first
// reply, as 2.0.5's write_UDP_FIN and zperf's upload_fin do.
func (r *udpClientRun) finExchange() error {
	tries, wait := r.d.finTries, r.d.finWait
	if r.o.FINTries > 0 {
		tries = r.o.FINTries
	}
	if r.o.FINWait > 0 {
		wait = r.o.FINWait
	}
	r.res.FINID = r.d.finID(r.res.Generated)
	sec, usec := r.d.stamp(time.Now(), r.start, r.o)
	putStamp(r.buf, r.res.FINID, sec, usec)
	if r.d.finHdr != nil {
		r.d.finHdr(r.buf)
	}
	r.res.FINDatagram = append([]byte(nil), r.buf...)
	rb := make([]byte, maxDatagramRead)
	for try := 0; try < tries; try++ {
		n, err := r.conn.Write(r.buf)
		if err != nil {
			r.res.SendErrors++
		} else {
			r.res.FINSends++
			r.res.FINBytes += int64(n)
		}
		if err := r.conn.SetReadDeadline(time.Now().Add(wait)); err != nil {
			return fmt.Errorf("%s client: set read deadline: %w", r.d.name, err)
		}
		n, err = r.conn.Read(rb)
		if r.ctx.Err() != nil {
			return fmt.Errorf("%s client: waiting for the server report: %w", r.d.name, r.ctx.Err())
		}
		if err != nil {
			if !isTimeout(err) {
				r.res.ReadErrs = append(r.res.ReadErrs, err)
			}
			continue
		}
		r.takeReply(append([]byte(nil), rb[:n]...))
		return nil
	}
	r.res.ReportNote = "no reply after " + strconv.Itoa(tries) + " FINs"
	return nil
}

func (r *udpClientRun) takeReply(reply []byte) {
	r.res.Replies = append(r.res.Replies, reply)
	seen := reply
	if r.d.readLen > 0 && len(seen) > r.d.readLen {
		seen = seen[:r.d.readLen]
	}
	r.res.ReportBytes = seen
	r.res.Report, r.res.ReportAccepted, r.res.ReportNote = r.d.parse(seen)
}
