package iperf2

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// The wirebench extension of the UDP server report: what a wirebench server
// counts that the iperf 2 report has no field for, appended after the
// 128-byte modern report (docs/json.md, "What a wirebench server adds to its
// report").
//
//	128  magic "wbx1"
//	132  u16 length of the extension (magic included)
//	134  u16 flags: 1 = duplicates present
//	136  u64 duplicates: datagrams whose id had already arrived
//	144  u16 length of the diagnosis, then that many bytes of UTF-8
//	     then, when flags has 2: the one-way transit summary (WBLatency),
//	     seven big-endian 64-bit words: min, p50, p90, p99, p99.9 and max
//	     transit in µs (signed: receive time minus the sender's stamp,
//	     clock offset included), and the count of datagrams it covers
//
// The transit summary follows the diagnosis so that a wirebench client
// that predates it, which reads the diagnosis at 144 and ignores the rest
// of the length, still parses the extension.
//
// iperf 2.1.8 clients read the report at offset 16 of whatever arrives and
// ignore the rest (Client::AwaitServerFinPacket reads up to MAXUDPBUF, 1470
// bytes, into a buffer of at least sizeof(client_tcp_testhdr) + 512 bytes),
// so the whole datagram is kept within MaxReportLenWithExt (512 bytes). Real
// iperf 2 servers send 128 bytes: a report without it leaves the counts
// unknown.
const (
	wbExtMagic = "wbx1"
	wbExtFixed = 18 // magic, length, flags, duplicates, diagnosis length
	// MaxReportLenWithExt is the longest report a wirebench server sends.
	MaxReportLenWithExt = 512
	wbExtDupFlag        = 1
	wbExtLatencyFlag    = 2
	wbExtLatencyLen     = 7 * 8
	// MinDatagramForLatency is the shortest client datagram whose length
	// leaves the reply room for the transit summary (AppendWBExtension's
	// limit): with shorter datagrams the server sends none.
	MinDatagramForLatency = ReportLenModern + wbExtFixed + wbExtLatencyLen
)

// WBLatency summarises the one-way transit times (receive time minus the
// sender's timestamp, in µs) of the datagrams a wirebench server received.
// The values include whatever offset lies between the two clocks: they are
// one-way delays only when both ends share a clock; otherwise only their
// differences from Min (the delay variation) mean anything.
type WBLatency struct {
	MinUS, P50US, P90US, P99US, P999US, MaxUS int64
	Count                                     uint64
}

// WBExtension is what a wirebench server adds to its report.
type WBExtension struct {
	// Duplicates is the server's count of repeated datagrams; HasDuplicates
	// says it was sent.
	Duplicates    uint64
	HasDuplicates bool
	// Diagnosis is the server's timer-tick finding with its evidence
	// (empty: none), cut to fit MaxReportLenWithExt.
	Diagnosis string
	// Latency is the server's transit summary; HasLatency says it was
	// sent (it is left out when the reply has no room for it).
	Latency    WBLatency
	HasLatency bool
}

// AppendWBExtension appends e to a 128-byte modern report, so that the
// whole reply is at most limit bytes (and MaxReportLenWithExt): the
// diagnosis is cut to fit, and nothing is appended when not even the
// counts fit. A client reads the reply into a buffer of its own; pass the
// length of its datagrams, which that buffer holds, so that no peer reads
// past its buffer (2.1.8 allocates at least 512 bytes more, older ones
// may not).
func AppendWBExtension(dst []byte, e WBExtension, limit int) []byte {
	room := min(MaxReportLenWithExt, limit) - ReportLenModern - wbExtFixed
	if room < 0 {
		return dst
	}
	lat := e.HasLatency && room >= wbExtLatencyLen
	if lat {
		room -= wbExtLatencyLen // the summary goes before the diagnosis is cut
	}
	diag := e.Diagnosis
	if len(diag) > room {
		diag = diag[:room]
		for !utf8.ValidString(diag) {
			diag = diag[:len(diag)-1]
		}
	}
	be := binary.BigEndian
	dst = append(dst, wbExtMagic...)
	n := wbExtFixed + len(diag)
	var flags uint16
	if e.HasDuplicates {
		flags |= wbExtDupFlag
	}
	if lat {
		flags |= wbExtLatencyFlag
		n += wbExtLatencyLen
	}
	dst = be.AppendUint16(dst, uint16(n))
	dst = be.AppendUint16(dst, flags)
	dst = be.AppendUint64(dst, e.Duplicates)
	dst = be.AppendUint16(dst, uint16(len(diag)))
	dst = append(dst, diag...)
	if lat {
		l := e.Latency
		for _, v := range []int64{l.MinUS, l.P50US, l.P90US, l.P99US, l.P999US, l.MaxUS} {
			dst = be.AppendUint64(dst, uint64(v))
		}
		dst = be.AppendUint64(dst, l.Count)
	}
	return dst
}

// parseWBExtension reads the extension after a modern report b; ok is false
// when b carries none (or a malformed one).
func parseWBExtension(b []byte) (WBExtension, bool) {
	if len(b) < ReportLenModern+wbExtFixed {
		return WBExtension{}, false
	}
	x := b[ReportLenModern:]
	be := binary.BigEndian
	n := int(be.Uint16(x[4:]))
	if !bytes.Equal(x[:4], []byte(wbExtMagic)) || n < wbExtFixed || n > len(x) {
		return WBExtension{}, false
	}
	dl := int(be.Uint16(x[16:]))
	if wbExtFixed+dl > n {
		return WBExtension{}, false
	}
	flags := be.Uint16(x[6:])
	e := WBExtension{HasDuplicates: flags&wbExtDupFlag != 0, Diagnosis: string(x[wbExtFixed : wbExtFixed+dl])}
	if e.HasDuplicates {
		e.Duplicates = be.Uint64(x[8:])
	}
	// The transit summary after the diagnosis; a flag without the room
	// for it leaves it out rather than failing what came before.
	if at := wbExtFixed + dl; flags&wbExtLatencyFlag != 0 && at+wbExtLatencyLen <= n {
		w := func(i int) int64 { return int64(be.Uint64(x[at+8*i:])) }
		e.Latency = WBLatency{MinUS: w(0), P50US: w(1), P90US: w(2), P99US: w(3), P999US: w(4), MaxUS: w(5), Count: uint64(w(6))}
		e.HasLatency = true
	}
	return e, true
}
