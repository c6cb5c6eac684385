package iperf2

// UDP datagram header: wire-protocols.md §1.1 (iperf 2.1.8 payloads.h struct UDP_datagram).
//
//	Modern (2.0.10+, 2.1.x, 2.2.x, zperf >= PR #88742)    Legacy (2.0.5, old zperf, ESP-IDF)
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        id (low 32 bits; int32 unless SEQNO64B)                |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        tv_sec (sender wall clock, u32)                        |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        tv_usec (u32)                                          |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  modern: id2 = high 32 bits, sign-extended (FFFFFFFF on FIN)  | 12   <- legacy: client header starts here
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  modern: client header (B = 16)                               | 16
//
// id2 is meaningful only when the client header's flags carry FlagSeqNo64b; new zperf leaves it as 'zzzz'.

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Layout is the UDP datagram header layout. The zero value is LayoutModern.
type Layout int

const (
	// LayoutModern is the 16-byte header (id, tv_sec, tv_usec, id2) of iperf 2.0.10+ and 2.1.x/2.2.x.
	LayoutModern Layout = iota
	// LayoutLegacy is the 12-byte header (id, tv_sec, tv_usec) of iperf 2.0.5, old zperf and ESP-IDF.
	LayoutLegacy
)

// HeaderLen returns the datagram header length, which is also the offset B of the client header and of the
// server report: 16 for LayoutModern, 12 for LayoutLegacy.
func (l Layout) HeaderLen() int {
	if l == LayoutLegacy {
		return 12
	}
	return 16
}

// String returns "modern" or "legacy".
func (l Layout) String() string {
	switch l {
	case LayoutModern:
		return "modern"
	case LayoutLegacy:
		return "legacy"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// FirstID is the sequence number of the first data datagram: 1 for modern (2.1.x), 0 for legacy (2.0.5).
func (l Layout) FirstID() int64 {
	if l == LayoutLegacy {
		return 0
	}
	return 1
}

// PutDatagram writes the datagram header into b[:l.HeaderLen()], which must be long enough (it panics
// otherwise, like binary.BigEndian.PutUint32). It writes the low 32 bits of id at 0 and, for LayoutModern, the
// sign-extended high 32 bits at 12. ts gives tv_sec (Unix seconds, truncated to 32 bits) and tv_usec; the zero
// time.Time writes zeros (as ESP-IDF senders do).
func PutDatagram(b []byte, l Layout, id int64, ts time.Time) {
	_ = b[l.HeaderLen()-1]
	binary.BigEndian.PutUint32(b[0:], uint32(id))
	var sec, usec uint32
	if !ts.IsZero() {
		sec = uint32(ts.Unix())
		usec = uint32(ts.Nanosecond() / 1000)
	}
	binary.BigEndian.PutUint32(b[4:], sec)
	binary.BigEndian.PutUint32(b[8:], usec)
	if l != LayoutLegacy {
		binary.BigEndian.PutUint32(b[12:], uint32(id>>32))
	}
}

// ParseDatagram reads the id and timestamp of a datagram. For LayoutModern, id2 at 12 is used only when seq64
// is true (the client header has FlagSeqNo64b); otherwise, and always for LayoutLegacy, id is the
// sign-extended int32 at 0, as a 2.1.8 server reads it. ok is false when b is shorter than l.HeaderLen().
func ParseDatagram(b []byte, l Layout, seq64 bool) (id int64, sec, usec uint32, ok bool) {
	if len(b) < l.HeaderLen() {
		return 0, 0, 0, false
	}
	low := binary.BigEndian.Uint32(b[0:])
	sec = binary.BigEndian.Uint32(b[4:])
	usec = binary.BigEndian.Uint32(b[8:])
	if l != LayoutLegacy && seq64 {
		high := binary.BigEndian.Uint32(b[12:])
		return int64(uint64(high)<<32 | uint64(low)), sec, usec, true
	}
	return int64(int32(low)), sec, usec, true
}
