package iperf2

// wirebench's TCP receiver report, an extension of the iperf 2 TCP test that iperf 2 peers never see.
//
// A wirebench client asks for it by putting ReservedAskTCPReport in the client_hdrext reserved word (Ext+20),
// which iperf 2.1.8 servers read and ignore. A wirebench server that sees it answers a plain forward TCP test,
// after reading the client's FIN, with these 24 bytes on the test connection before it closes (after the
// CLIENTHDRACK, when it sent one):
//
//	 0 | magic = 0x57425243 ("WBRC")                                |
//	 4 | length = 24                                                |
//	 8 | bytes the server received, the test header included (u64) |
//	16 | the server's receive time in microseconds (u64):           |
//	   | from the end of the header to the last byte read           |
//
// The client has shut down its write side by then and only reads, so the report cannot mix with test data. A
// server that does not know the extension (iperf 2.1.8) sends nothing, and the client has no receiver figure.

import (
	"encoding/binary"
	"time"
)

// ReservedAskTCPReport in ClientHeader.Reserved asks a wirebench server for its TCP receiver report.
const ReservedAskTCPReport uint16 = 0x5742 // "WB"

// TCP receiver report framing.
const (
	TCPReportMagic = 0x57425243 // "WBRC"
	TCPReportSize  = 24
)

// TCPReport is what a wirebench server received in a TCP test.
type TCPReport struct {
	Bytes   int64
	Elapsed time.Duration // microsecond resolution on the wire
}

// AppendTo appends the 24-byte report.
func (r TCPReport) AppendTo(dst []byte) []byte {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, TCPReportMagic)
	dst = be.AppendUint32(dst, TCPReportSize)
	dst = be.AppendUint64(dst, uint64(max(r.Bytes, 0)))
	return be.AppendUint64(dst, uint64(max(r.Elapsed.Microseconds(), 0)))
}

// ParseTCPReply finds the TCP receiver report in everything a server sent on a forward TCP test: an optional
// CLIENTHDRACK (28 or 52 bytes) and then the report. ok is false when b holds no whole, well-formed report
// (an iperf 2 server, a short read, or bytes that are neither).
func ParseTCPReply(b []byte) (r TCPReport, ok bool) {
	if n := ClientHdrAckLen(b); n > 0 {
		if len(b) < n {
			return r, false
		}
		b = b[n:]
	}
	if len(b) < TCPReportSize {
		return r, false
	}
	be := binary.BigEndian
	if be.Uint32(b) != TCPReportMagic || be.Uint32(b[4:]) != TCPReportSize {
		return r, false
	}
	n, us := be.Uint64(b[8:]), be.Uint64(b[16:])
	if n > 1<<62 || us > 1<<62/uint64(time.Microsecond) {
		return r, false
	}
	return TCPReport{Bytes: int64(n), Elapsed: time.Duration(us) * time.Microsecond}, true
}
