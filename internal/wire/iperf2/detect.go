package iperf2

// Dialect detection and FIN ids: wire-protocols.md §1.4, §7.
//
//	offset 12            offset 16              verdict
//	-------------------  ---------------------  -------------------------------------------------
//	any                  EXTEND|SEQNO64B|        modern (2.1.x client header at 16)
//	                     VERSION1|VERSION2
//	0 or 8000000x        1..256 (numThreads)    legacy (2.0.5 / zperf: client header at 12)
//	anything else        anything else          modern (default; also ESP-IDF seq + zeros, zperf-new 'zzzz')
//
// FIN ids (the end-of-test datagram has a negative id):
//
//	modern: data ids 1..n, FIN −(n+1), each retry decrements: −(n+2), −(n+3), …   (id2 = FFFFFFFF)
//	legacy: data ids 0..n−1, FIN −n, every retry repeats −n

import "encoding/binary"

// DetectUDPLayout applies the §7 rules to a client datagram to choose the layout of the reply. Datagrams
// shorter than 20 bytes are modern by default. The rules cannot tell a modern sender whose header has flags 0,
// numThreads 1..256 and id2 0 from a legacy one; such a sender should set its flags (2.1.8 always sends
// EXTEND|SEQNO64B). A legacy client also repeats the same FIN id, a modern one decrements it.
func DetectUDPLayout(b []byte) Layout {
	if len(b) < 20 {
		return LayoutModern
	}
	be := binary.BigEndian
	w12, w16 := be.Uint32(b[12:]), be.Uint32(b[16:])
	if w16&(FlagExtend|FlagSeqNo64b|FlagVersion1|FlagVersion2) != 0 {
		return LayoutModern
	}
	if (w12 == 0 || w12&^0xF == FlagVersion1) && w16 >= 1 && w16 <= 256 {
		return LayoutLegacy
	}
	return LayoutModern
}

// IsFlaglessTCPHeader reports whether a TCP stream's first bytes b are
// the 24-byte client header iperf 2.0.5 and lwiperf send for a test
// without -r/-d (wire-protocols.md §2.1): flags 0, then numThreads
// 1..256 and a port 1..65535. A 2.1 server takes such a stream as plain
// data, since flags 0 announce no header; the streams that carry none
// never match: zperf's ('zzzz' after a zero word), ESP-IDF's (zeros after
// a counter), wirebench raw's (digits after a zero word).
func IsFlaglessTCPHeader(b []byte) bool {
	if len(b) < ClientHeaderV1Len {
		return false
	}
	be := binary.BigEndian
	threads, port := be.Uint32(b[4:]), be.Uint32(b[8:])
	return be.Uint32(b) == 0 && threads >= 1 && threads <= 256 && port >= 1 && port <= 65535
}

// IsFIN reports whether a datagram id marks the end of the test (it is negative).
func IsFIN(id int64) bool { return id < 0 }

// FINID returns the id of the FIN to send on try retry (0 for the first FIN), given packetsSent, the number of
// data datagrams sent before it (not counting FINs):
//
//   - LayoutModern: the data ids were 1..packetsSent, so the first FIN is −(packetsSent+1) and each retry is one
//     lower, as 2.1.8 does.
//   - LayoutLegacy: the data ids were 0..packetsSent−1, so every FIN is −packetsSent, as 2.0.5 does. With
//     packetsSent 0 this is 0, which no server takes for a FIN: send at least one datagram first.
//
// In both cases the first FIN is minus the id the next data datagram would have had.
func FINID(l Layout, packetsSent int64, retry int) int64 {
	if l == LayoutLegacy {
		return -packetsSent
	}
	return -(packetsSent + 1 + int64(retry))
}
