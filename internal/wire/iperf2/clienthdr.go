package iperf2

// Client test header: wire-protocols.md §1.2, §1.3, §2.1, §2.2 (iperf 2.1.8 payloads.h client_hdr_v1 and
// client_hdrext; Settings_GenerateClientHdr / Settings_GenerateClientHdrV1 / Settings_ClientTestHdrLen).
// B = 16 (modern UDP), 12 (legacy UDP), 0 (TCP).
//
//	 B+  client_hdr_v1 (24 bytes, every version)
//	    +---------------------------------------------------------------+
//	  0 | flags (u32, flags.go)                                         |
//	  4 | numThreads (-P)                                               |
//	  8 | mPort (connect-back port for -r/-d: -L, else the server port) |
//	 12 | mBufLen (-l if given explicitly, else 0)                      |
//	 16 | mWinBand (2.0.5: UDP rate bit/s or TCP window; 2.1.8: 0)      |
//	 20 | mAmount (int32; <0: -duration in 10 ms; >0: bytes, 31 bits)   |
//	    +---------------------------------------------------------------+
//	    client_hdrext (36 bytes in 2.1.x, 40 in 2.2.x), when EXTEND or VERSION2
//	 24 | type (0)                                                      |
//	 28 | length (0)                                                    |
//	 32 | upperflags (u16)              | lowerflags (u16)              |
//	 36 | version_u = major<<16 | minor                                 |
//	 40 | version_l = patch<<16 | kind                                  |
//	 44 | reserved (u16)                | TOS (u16)                     |
//	 48 | lRate: rate bits 0..31 (bit/s, or pps with UNITS_PPS)         |
//	 52 | uRate: rate bits 32..55, shifted left by 8                    |
//	 56 | TCPWritePrefetch                                              |
//	 60 | barrier_usecs (2.2.x only)                                    |
//	    +---------------------------------------------------------------+
//
// With the extension, 2.1.8 sets LEN_BIT and puts the header length (len<<1) in flags bits 1..8. For UDP the
// length also counts the 16-byte datagram header (76 = 16+24+36, flags 48010098); for TCP it does not (60,
// flags 40010078).

import (
	"encoding/binary"
	"time"
)

// Sizes of the header parts, in bytes.
const (
	ClientHeaderV1Len  = 24 // client_hdr_v1
	ClientHeaderExtLen = 36 // client_hdrext as sent by 2.1.x (and by wirebench)
	// ClientHeaderExt22Len is the 2.2.x client_hdrext, which appends barrier_usecs.
	ClientHeaderExt22Len = 40
)

// DefaultUDPRate is the lRate 2.1.8 sends for UDP when no -b is given (kDefault_UDPRate, 1 Mi bit/s).
const DefaultUDPRate = 1048576

// ClientHeader is client_hdr_v1 plus client_hdrext. The extension fields are meaningful (and marshalled) only
// when Flags has FlagExtend or FlagVersion2 (see HasExtension).
type ClientHeader struct {
	Flags      uint32
	NumThreads int32
	Port       int32
	BufLen     int32
	WinBand    int32
	Amount     int32 // see Duration, ByteCount, AmountForDuration, AmountForBytes

	// Extension.
	Type, Length       int32  // 0 in every 2.1.8 header
	UpperFlags         uint16 // Upper* constants
	LowerFlags         uint16 // Lower* constants (2.2.x)
	VersionU, VersionL uint32 // see VersionU, VersionL, VersionString
	Reserved           uint16 // 0 from iperf 2; ReservedAskTCPReport from a wirebench client (tcpreport.go)
	TOS                uint16
	RateLow, RateHigh  uint32 // raw wire words; use Rate and SetRate
	WritePrefetch      uint32
	BarrierUsecs       uint32 // 2.2.x only; parsed when present, never marshalled
	HasBarrier         bool   // ParseClientHeader found a 2.2.x 40-byte extension
}

// HasExtension reports whether the header carries client_hdrext (FlagExtend or FlagVersion2).
func (h *ClientHeader) HasExtension() bool { return h.Flags&(FlagExtend|FlagVersion2) != 0 }

// Rate returns the requested rate: bit/s, or packets/s when pps is true (UpperUnitsPPS). It decodes uRate the
// way 2.1.8 does: rate = lRate | (uRate>>8)<<32.
func (h *ClientHeader) Rate() (v uint64, pps bool) {
	v = uint64(h.RateLow) | uint64(h.RateHigh>>8)<<32
	return v, h.UpperFlags&UpperUnitsPPS != 0
}

// SetRate stores v (bit/s, or packets/s when pps) as 2.1.8 does: lRate = low 32 bits, uRate = (v>>32)<<8, so
// bits 56..63 of v are lost. It sets or clears UpperUnitsPPS. It does not set UpperBWSet: the 2.1.8 client never
// does (Settings_GenerateClientHdr; a capture of `iperf -c -u -b 20k` shows upperflags 0 and lRate 20000).
// Note that 2.1.8 converts a pps rate to bit/s (pps*8*len) itself for -R, --full-duplex, -r and -d; that is the
// caller's decision.
func (h *ClientHeader) SetRate(v uint64, pps bool) {
	h.RateLow = uint32(v)
	h.RateHigh = uint32(v>>32) << 8
	if pps {
		h.UpperFlags |= UpperUnitsPPS
	} else {
		h.UpperFlags &^= UpperUnitsPPS
	}
}

// Duration returns the test duration when Amount is negative (-Amount × 10 ms).
func (h *ClientHeader) Duration() (time.Duration, bool) {
	if h.Amount >= 0 {
		return 0, false
	}
	return time.Duration(-int64(h.Amount)) * 10 * time.Millisecond, true
}

// ByteCount returns the byte count when Amount is positive (-n).
func (h *ClientHeader) ByteCount() (int64, bool) {
	if h.Amount <= 0 {
		return 0, false
	}
	return int64(h.Amount), true
}

// AmountForDuration encodes a duration as mAmount: −(d in 10 ms units), rounded to the nearest unit, at least
// one unit for any positive d and clamped to −MaxInt32. d <= 0 gives 0 (no duration). `-t 2` gives −200
// (FFFFFF38).
func AmountForDuration(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	const unit = 10 * time.Millisecond
	units := (d + unit/2) / unit
	if units < 1 {
		units = 1
	}
	if units > 0x7FFFFFFF {
		units = 0x7FFFFFFF
	}
	return -int32(units)
}

// AmountForBytes encodes a byte count as mAmount the way 2.1.8 does: the low 31 bits of n, so counts of 2 GiB
// and more wrap. n <= 0 gives 0.
func AmountForBytes(n int64) int32 {
	if n <= 0 {
		return 0
	}
	return int32(n & 0x7FFFFFFF)
}

// Len returns the number of bytes the header marshals to: 24, or 60 with the extension.
func (h *ClientHeader) Len() int {
	if h.HasExtension() {
		return ClientHeaderV1Len + ClientHeaderExtLen
	}
	return ClientHeaderV1Len
}

// WireFlags returns the flags word AppendTo (udp false) or AppendUDPTo (udp true) writes: Flags unchanged
// without the extension; with it, LEN_BIT set and the length field replaced by the header length (60 for TCP,
// 76 for UDP, which counts the 16-byte datagram header, as 2.1.8 does).
func (h *ClientHeader) WireFlags(udp bool) uint32 {
	if !h.HasExtension() {
		return h.Flags
	}
	n := uint32(h.Len())
	if udp {
		n += uint32(LayoutModern.HeaderLen())
	}
	return h.Flags&^FlagLenMask | FlagLenBit | (n<<1)&FlagLenMask
}

// AppendTo appends the header as a TCP client sends it (B = 0): 24 bytes, or 60 with the extension, big-endian,
// with flags from WireFlags(false) (2.1.8 plain TCP: 40010078).
func (h *ClientHeader) AppendTo(dst []byte) []byte { return h.appendTo(dst, false) }

// AppendUDPTo appends the header as a modern UDP client puts it at offset 16 of each datagram: the same bytes as
// AppendTo except that the length in the flags counts the datagram header too (2.1.8 plain UDP: 48010098,
// len 76). A legacy (v1-only) header has no length, so both forms are identical for it.
func (h *ClientHeader) AppendUDPTo(dst []byte) []byte { return h.appendTo(dst, true) }

func (h *ClientHeader) appendTo(dst []byte, udp bool) []byte {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, h.WireFlags(udp))
	dst = be.AppendUint32(dst, uint32(h.NumThreads))
	dst = be.AppendUint32(dst, uint32(h.Port))
	dst = be.AppendUint32(dst, uint32(h.BufLen))
	dst = be.AppendUint32(dst, uint32(h.WinBand))
	dst = be.AppendUint32(dst, uint32(h.Amount))
	if !h.HasExtension() {
		return dst
	}
	dst = be.AppendUint32(dst, uint32(h.Type))
	dst = be.AppendUint32(dst, uint32(h.Length))
	dst = be.AppendUint16(dst, h.UpperFlags)
	dst = be.AppendUint16(dst, h.LowerFlags)
	dst = be.AppendUint32(dst, h.VersionU)
	dst = be.AppendUint32(dst, h.VersionL)
	dst = be.AppendUint16(dst, h.Reserved)
	dst = be.AppendUint16(dst, h.TOS)
	dst = be.AppendUint32(dst, h.RateLow)
	dst = be.AppendUint32(dst, h.RateHigh)
	return be.AppendUint32(dst, h.WritePrefetch)
}

// ParseClientHeader decodes a client header; b starts at the header (offset B). It needs 24 bytes, or 60 when
// the flags have FlagExtend or FlagVersion2, and returns a *ShortError (wrapping ErrShort) otherwise. It reads
// the 2.2.x barrier_usecs (consuming 64 bytes) only when the peer announces version 2.2 or later and b holds
// them; callers framing a TCP stream should use ClientHeaderLen, not the consumed count, to know how many bytes
// the peer sent. The flags are returned as sent (LEN bits included). Headers with none of VERSION1, VERSION2,
// EXTEND (2.0.5 plain, zperf) still decode as v1; whether to honour them is the caller's decision.
func ParseClientHeader(b []byte) (ClientHeader, int, error) {
	var h ClientHeader
	if len(b) < 4 {
		return h, 0, &ShortError{What: "client header flags", Need: 4, Have: len(b)}
	}
	be := binary.BigEndian
	h.Flags = be.Uint32(b)
	need := h.Len()
	if len(b) < need {
		return h, 0, &ShortError{What: "client header", Need: need, Have: len(b)}
	}
	h.NumThreads = int32(be.Uint32(b[4:]))
	h.Port = int32(be.Uint32(b[8:]))
	h.BufLen = int32(be.Uint32(b[12:]))
	h.WinBand = int32(be.Uint32(b[16:]))
	h.Amount = int32(be.Uint32(b[20:]))
	if !h.HasExtension() {
		return h, need, nil
	}
	e := b[ClientHeaderV1Len:]
	h.Type = int32(be.Uint32(e[0:]))
	h.Length = int32(be.Uint32(e[4:]))
	h.UpperFlags = be.Uint16(e[8:])
	h.LowerFlags = be.Uint16(e[10:])
	h.VersionU = be.Uint32(e[12:])
	h.VersionL = be.Uint32(e[16:])
	h.Reserved = be.Uint16(e[20:])
	h.TOS = be.Uint16(e[22:])
	h.RateLow = be.Uint32(e[24:])
	h.RateHigh = be.Uint32(e[28:])
	h.WritePrefetch = be.Uint32(e[32:])
	if h.VersionU >= 0x00020002 && len(e) >= ClientHeaderExt22Len {
		h.BarrierUsecs = be.Uint32(e[36:])
		h.HasBarrier = true
		need += ClientHeaderExt22Len - ClientHeaderExtLen
	}
	return h, need, nil
}

// ClientHeaderLen returns how many bytes, counted from B, a client header announces given its first word:
// 0 when none of VERSION1, VERSION2, EXTEND is set (no header: a 2.1 server treats the stream as plain data);
// with LEN_BIT the length field (minus the 16-byte datagram header when udp, floored at 0); otherwise 24, plus
// 36 with EXTEND or VERSION2. This is what a TCP server must read (after the 4 flag bytes it peeked) to stay
// aligned with the client's first write. Two deliberate departures from 2.1.8's Settings_ClientTestHdrLen:
// VERSION2 without EXTEND and without LEN_BIT gives 60 here (2.1.8 says 36, which cannot hold the v1 part
// the extension follows), and a LEN value is never rejected (the 8-bit field cannot exceed MaxHeaderLen).
// The result may be smaller than ParseClientHeader needs; the header is then malformed.
func ClientHeaderLen(flags uint32, udp bool) int {
	if flags&(FlagVersion1|FlagVersion2|FlagExtend) == 0 {
		return 0
	}
	if flags&FlagLenBit != 0 {
		n := int(flags&FlagLenMask) >> 1
		if udp {
			n -= LayoutModern.HeaderLen()
		}
		return max(n, 0)
	}
	if flags&(FlagExtend|FlagVersion2) != 0 {
		return ClientHeaderV1Len + ClientHeaderExtLen
	}
	return ClientHeaderV1Len
}

// NewClientHeader returns a 2.1.8-style header for wirebench as a client: FlagExtend (plus FlagSeqNo64b for
// UDP), numThreads, the port, the version words of 2.1.8 and, for UDP, DefaultUDPRate. Callers then set
// Amount, BufLen, the rate and mode flags (FlagVersion1/FlagRunNow for -r/-d; FlagVersion2 with UpperReverse or
// UpperFullDuplex for -R/--full-duplex, plus FlagUDPTests for UDP, as 2.1.8 does).
func NewClientHeader(udp bool, numThreads, port int32) ClientHeader {
	h := ClientHeader{
		Flags:      FlagExtend,
		NumThreads: numThreads,
		Port:       port,
		VersionU:   VersionU,
		VersionL:   VersionL,
	}
	if udp {
		h.Flags |= FlagSeqNo64b
		h.RateLow = DefaultUDPRate
	}
	return h
}
