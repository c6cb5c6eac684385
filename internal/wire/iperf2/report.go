package iperf2

// UDP server report ("AckFIN"), server -> client: wire-protocols.md §1.5, §6.9, §7 (iperf 2.1.8 payloads.h
// server_hdr_v1 / server_hdr_extension / server_hdr_extension2; Server::write_UDP_AckFIN).
//
//	modern legacy
//	  0      0   datagram header: 2.1.8 sends 16 zero bytes; 2.0.5/zperf echo the FIN's 12 (16) bytes
//	 16     12   flags: 88000000 (2.1.8; C8000000 with SERVER_HEADER_EXTEND), 80000000 (2.0.5, zperf)
//	 20     16   total_len1: bytes received, high 32 bits
//	 24     20   total_len2: bytes received, low 32 bits
//	 28     24   stop_sec    \ test duration (relative)
//	 32     28   stop_usec   /
//	 36     32   error_cnt (lost, low 32 bits)
//	 40     36   outorder_cnt (low 32 bits)
//	 44     40   datagrams ("Total" = highest |id|, low 32 bits)
//	 48     44   jitter1 (s) \ jitter
//	 52     48   jitter2 (us)/
//	 56      -   min, max, sum, mean, m2, vd transit: six (int s, int us) pairs (56..103)
//	104      -   cntTransit
//	108      -   cntIPG (2.1.8: datagrams / duration)
//	112      -   IPGsum (2.1.8: 1)
//	116      -   error_cnt2    \ high 32 bits, used when the flags have SEQNO64B
//	120      -   outorder_cnt2  |
//	124      -   datagrams2    /
//	128     52   end (modern: 2.1.8 sends exactly 128 bytes; legacy: this package sends exactly 52)

import (
	"bytes"
	"encoding/binary"
	"math"
	"time"
)

// Report lengths.
const (
	ReportLenModern = 128 // 16 + 40 (v1) + 60 (extension) + 12 (64-bit words)
	ReportLenLegacy = 52  // 12 + 40 (v1): what the 2.0.5 client requires, and what old zperf sends
	reportV1Len     = 40
)

// DefaultReportFlags is the flags word 2.1.8 puts in its report (VERSION1 | SEQNO64B).
const DefaultReportFlags = FlagVersion1 | FlagSeqNo64b

// TransitStats is the 2.1 report extension (server_hdr_extension). The 2.1.8 server fills it in every report
// but its client reads it only when the flags have ServerFlagExtend. Transit times are (int seconds, int
// microseconds) pairs on the wire, signed (a sender clock ahead of the receiver gives negative transit).
type TransitStats struct {
	Min, Max, Sum, Mean time.Duration
	M2                  float64 // Welford M2 of transit as 2.1.8 sends it (whole part + millionths; ~s² × 1e12)
	VD                  time.Duration
	Count               int32 // cntTransit
	IPGCount            int32 // cntIPG; 2.1.8 sends datagrams / duration
	IPGSum              int32 // IPGsum; 2.1.8 sends 1
}

// ServerReport is the server's UDP report. Counts are 64-bit; the legacy layout carries only the low 32 bits.
type ServerReport struct {
	Flags      uint32 // 0 when appending means DefaultReportFlags (modern) or FlagVersion1 (legacy)
	TotalBytes uint64
	Stop       time.Duration // test duration; negative values are written as 0
	Errors     uint64        // lost datagrams
	OutOfOrder uint64
	Datagrams  uint64        // "Total": the highest |id| seen
	Jitter     time.Duration // negative values are written as 0

	// Transit is the 2.1 extension; modern layout only. AppendModern writes it as given (zeros allowed).
	Transit TransitStats
	// HasTransit is set by ParseServerReport when the reply was long enough to hold the extension.
	HasTransit bool
	// WB is what a wirebench server appends after the modern report (see WBExtension); nil when the reply
	// carries none (any other server).
	WB *WBExtension
}

// AppendModern appends a 128-byte modern report: the first 16 bytes of finHeader (zero-padded; 16 zero bytes,
// as 2.1.8 sends, when finHeader is nil), the flags (DefaultReportFlags unless r.Flags is set) at 16, the report
// at 16, the transit extension at 56 and, when the flags have SEQNO64B, the high count words at 116/120/124
// (zeros otherwise).
func (r *ServerReport) AppendModern(dst []byte, finHeader []byte) []byte {
	dst = appendEcho(dst, finHeader, LayoutModern.HeaderLen())
	flags := r.Flags
	if flags == 0 {
		flags = DefaultReportFlags
	}
	dst = r.appendV1(dst, flags)
	dst = r.Transit.appendTo(dst)
	be := binary.BigEndian
	if flags&FlagSeqNo64b == 0 {
		return append(dst, make([]byte, 12)...)
	}
	dst = be.AppendUint32(dst, uint32(r.Errors>>32))
	dst = be.AppendUint32(dst, uint32(r.OutOfOrder>>32))
	return be.AppendUint32(dst, uint32(r.Datagrams>>32))
}

// AppendLegacy appends a legacy report of exactly ReportLenLegacy (52) bytes: the first 12 bytes of finHeader
// (the echo 2.0.5 and zperf send; zero-padded), the flags (FlagVersion1 unless r.Flags is set) at 12 and the
// report at 12. Counts are truncated to 32 bits; there is no transit extension.
func (r *ServerReport) AppendLegacy(dst []byte, finHeader []byte) []byte {
	dst = appendEcho(dst, finHeader, LayoutLegacy.HeaderLen())
	flags := r.Flags
	if flags == 0 {
		flags = FlagVersion1
	}
	return r.appendV1(dst, flags)
}

// appendEcho appends n bytes: the start of hdr, zero-padded.
func appendEcho(dst, hdr []byte, n int) []byte {
	m := min(len(hdr), n)
	dst = append(dst, hdr[:m]...)
	return append(dst, make([]byte, n-m)...)
}

func (r *ServerReport) appendV1(dst []byte, flags uint32) []byte {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, flags)
	dst = be.AppendUint32(dst, uint32(r.TotalBytes>>32))
	dst = be.AppendUint32(dst, uint32(r.TotalBytes))
	dst = appendUSecUsec(dst, r.Stop)
	dst = be.AppendUint32(dst, uint32(r.Errors))
	dst = be.AppendUint32(dst, uint32(r.OutOfOrder))
	dst = be.AppendUint32(dst, uint32(r.Datagrams))
	return appendUSecUsec(dst, r.Jitter)
}

func (t *TransitStats) appendTo(dst []byte) []byte {
	be := binary.BigEndian
	for _, d := range [...]time.Duration{t.Min, t.Max, t.Sum, t.Mean} {
		dst = appendSecUsec(dst, d)
	}
	whole := int32(t.M2)
	dst = be.AppendUint32(dst, uint32(whole))
	dst = be.AppendUint32(dst, uint32(int32(math.Round((t.M2-float64(whole))*1e6))))
	dst = appendSecUsec(dst, t.VD)
	dst = be.AppendUint32(dst, uint32(t.Count))
	dst = be.AppendUint32(dst, uint32(t.IPGCount))
	return be.AppendUint32(dst, uint32(t.IPGSum))
}

// appendSecUsec writes d as (int32 seconds, int32 microseconds), both truncated toward zero like 2.1.8's
// (long) casts, so a negative d gives two negative words. d is clamped to the int32 range of seconds.
func appendSecUsec(dst []byte, d time.Duration) []byte {
	const lim = math.MaxInt32 * time.Second
	d = min(max(d, -lim), lim)
	sec := int32(d / time.Second)
	usec := int32((d % time.Second) / time.Microsecond)
	dst = binary.BigEndian.AppendUint32(dst, uint32(sec))
	return binary.BigEndian.AppendUint32(dst, uint32(usec))
}

// appendUSecUsec writes a non-negative d as (u32 seconds, u32 microseconds), the way the 2.1.8 client reads
// stop and jitter; negative values are written as 0 and values beyond the u32 range of seconds are clamped.
func appendUSecUsec(dst []byte, d time.Duration) []byte {
	const lim = math.MaxUint32 * time.Second
	d = min(max(d, 0), lim)
	dst = binary.BigEndian.AppendUint32(dst, uint32(d/time.Second))
	return binary.BigEndian.AppendUint32(dst, uint32((d%time.Second)/time.Microsecond))
}

// ParseServerReport decodes a server report. If the word at 16 has VERSION1 (and b has at least 56 bytes) the
// layout is modern; otherwise if the word at 12 has VERSION1 (and b has at least 52 bytes) it is legacy;
// otherwise the error wraps ErrNotReport (or ErrShort when b is too short for either). So a legacy reply, whose
// word at 16 is total_len1 (0 below 2^63 bytes), never parses as modern. In the modern layout the transit
// extension is read when b has 116 bytes, and with SEQNO64B the high count words at 116..127 are required
// (*ShortError otherwise) and used. stop and jitter are unsigned (as the 2.1.8 client reads them); transit
// pairs are signed. A reply that is only an echo of the client's own datagram may still parse: check
// EchoCheck.IsEcho first.
func ParseServerReport(b []byte) (ServerReport, Layout, error) {
	be := binary.BigEndian
	if len(b) >= 16+reportV1Len && be.Uint32(b[16:])&FlagVersion1 != 0 {
		r, err := parseModern(b)
		return r, LayoutModern, err
	}
	if len(b) >= 12+reportV1Len && be.Uint32(b[12:])&FlagVersion1 != 0 {
		return parseV1(b[12:]), LayoutLegacy, nil
	}
	if len(b) < 12+reportV1Len {
		return ServerReport{}, LayoutModern, &ShortError{What: "server report", Need: 12 + reportV1Len, Have: len(b)}
	}
	return ServerReport{}, LayoutModern, ErrNotReport
}

func parseModern(b []byte) (ServerReport, error) {
	r := parseV1(b[16:])
	if len(b) >= 116 {
		r.Transit = parseTransit(b[56:116])
		r.HasTransit = true
	}
	if e, ok := parseWBExtension(b); ok {
		r.WB = &e
	}
	if r.Flags&FlagSeqNo64b == 0 {
		return r, nil
	}
	if len(b) < ReportLenModern {
		return r, &ShortError{What: "64-bit server report", Need: ReportLenModern, Have: len(b)}
	}
	be := binary.BigEndian
	r.Errors |= uint64(be.Uint32(b[116:])) << 32
	r.OutOfOrder |= uint64(be.Uint32(b[120:])) << 32
	r.Datagrams |= uint64(be.Uint32(b[124:])) << 32
	return r, nil
}

// parseV1 decodes server_hdr_v1; b has at least 40 bytes.
func parseV1(b []byte) ServerReport {
	be := binary.BigEndian
	return ServerReport{
		Flags:      be.Uint32(b[0:]),
		TotalBytes: uint64(be.Uint32(b[4:]))<<32 | uint64(be.Uint32(b[8:])),
		Stop:       unsignedSecUsec(b[12:]),
		Errors:     uint64(be.Uint32(b[20:])),
		OutOfOrder: uint64(be.Uint32(b[24:])),
		Datagrams:  uint64(be.Uint32(b[28:])),
		Jitter:     unsignedSecUsec(b[32:]),
	}
}

// parseTransit decodes server_hdr_extension; b has at least 60 bytes.
func parseTransit(b []byte) TransitStats {
	be := binary.BigEndian
	return TransitStats{
		Min:      signedSecUsec(b[0:]),
		Max:      signedSecUsec(b[8:]),
		Sum:      signedSecUsec(b[16:]),
		Mean:     signedSecUsec(b[24:]),
		M2:       float64(int32(be.Uint32(b[32:]))) + float64(int32(be.Uint32(b[36:])))/1e6,
		VD:       signedSecUsec(b[40:]),
		Count:    int32(be.Uint32(b[48:])),
		IPGCount: int32(be.Uint32(b[52:])),
		IPGSum:   int32(be.Uint32(b[56:])),
	}
}

func unsignedSecUsec(b []byte) time.Duration {
	sec := time.Duration(binary.BigEndian.Uint32(b))
	usec := time.Duration(binary.BigEndian.Uint32(b[4:]))
	return sec*time.Second + usec*time.Microsecond
}

func signedSecUsec(b []byte) time.Duration {
	sec := time.Duration(int32(binary.BigEndian.Uint32(b)))
	usec := time.Duration(int32(binary.BigEndian.Uint32(b[4:])))
	return sec*time.Second + usec*time.Microsecond
}

// EchoCheck recognises replies that are only echoes of the client's own datagrams (§1.5, §6.9: after its first
// report the 2.1.8 server re-sends the last datagram it read, i.e. the client's late FIN, instead of the
// report). Fill it with what the client sent.
type EchoCheck struct {
	// Layout is the layout of the client's datagrams; its HeaderLen is the offset of Header in them.
	Layout Layout
	// Header is the client header the client put at Layout.HeaderLen() in every datagram (its first 16 bytes
	// are compared). It may be nil when the client sent none.
	Header []byte
	// FirstFIN and LastFIN bound (inclusive, either order) the FIN ids sent; both 0 when none was sent.
	FirstFIN, LastFIN int64
}

// IsEcho reports whether reply b is an echo of one of the client's datagrams. It is true when
//
//   - the 16 bytes (or all of Header, if shorter) at Layout.HeaderLen() equal the start of Header: a real report
//     has its flags and byte counts there; or
//   - its id (ParseDatagram with SEQNO64B for modern, int32 for legacy) is one of the FIN ids sent and the word at
//     Layout.HeaderLen() lacks VERSION1, so it cannot be a report in the client's own layout.
//
// "The first 4 bytes equal a FIN id" alone is not enough: 2.0.5 and zperf reports legitimately start with an
// echo of the FIN's id, followed by the report flags (VERSION1) at the same offset.
func (c EchoCheck) IsEcho(b []byte) bool {
	off := c.Layout.HeaderLen()
	if n := min(len(c.Header), 16); n >= 4 && len(b) >= off+n && bytes.Equal(b[off:off+n], c.Header[:n]) {
		return true
	}
	if c.FirstFIN == 0 && c.LastFIN == 0 {
		return false
	}
	id, _, _, ok := ParseDatagram(b, c.Layout, true)
	lo, hi := min(c.FirstFIN, c.LastFIN), max(c.FirstFIN, c.LastFIN)
	if !ok || id < lo || id > hi {
		return false
	}
	return len(b) < off+4 || binary.BigEndian.Uint32(b[off:])&FlagVersion1 == 0
}
