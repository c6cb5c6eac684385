package iperf3

import (
	"encoding/binary"
	"fmt"
)

// UDP "connect" handshake (wire-protocols.md §4.4): the client's connected UDP
// socket sends 4 bytes to the server port; the server replies with 4 bytes
// from the socket it connected to the client.
const (
	// UDPConnectMsg is what a client sends (3.17+ on every host, 3.12–3.16
	// on little-endian hosts).
	UDPConnectMsg = "9876"
	// UDPConnectReply is what a server replies.
	UDPConnectReply  = "6789"
	udpLegacyReply   = "\xb1\x68\xde\x3a" // 987654321, little-endian
	udpLegacyReplyBE = "\x3a\xde\x68\xb1"
	udpLegacyMsg     = "\x15\xcd\x5b\x07" // 123456789, little-endian
	udpLegacyMsgBE   = "\x07\x5b\xcd\x15"
)

// UDPReplyKind classifies a 4-byte server reply to the UDP connect message.
type UDPReplyKind uint8

// Reply kinds.
const (
	UDPReplyInvalid  UDPReplyKind = iota
	UDPReplyCurrent               // "6789": 3.12+ (LE) and 3.17+
	UDPReplyLegacy                // b1 68 de 3a: 987654321 LE, ≤ 3.11
	UDPReplyReversed              // "9876": 3.12–3.16 on big-endian hosts
	UDPReplyLegacyBE              // 3a de 68 b1: 987654321 BE, ≤ 3.11 on big-endian hosts
)

// String names the kind.
func (k UDPReplyKind) String() string {
	switch k {
	case UDPReplyCurrent:
		return "current"
	case UDPReplyLegacy:
		return "legacy"
	case UDPReplyReversed:
		return "reversed"
	case UDPReplyLegacyBE:
		return "legacy-be"
	}
	return "invalid"
}

// ClassifyUDPReply tells which form of the server's UDP connect reply b is.
// A client accepts every kind but UDPReplyInvalid.
func ClassifyUDPReply(b []byte) UDPReplyKind {
	if len(b) != 4 {
		return UDPReplyInvalid
	}
	switch string(b) {
	case UDPConnectReply:
		return UDPReplyCurrent
	case udpLegacyReply:
		return UDPReplyLegacy
	case UDPConnectMsg:
		return UDPReplyReversed
	case udpLegacyReplyBE:
		return UDPReplyLegacyBE
	}
	return UDPReplyInvalid
}

// IsUDPConnectMsg reports whether b is one of the forms a client sends:
// "9876", its reverse "6789" (big-endian 3.12–3.16), or 123456789 in either
// byte order (≤ 3.11). iperf3 servers do not check the content; a server that
// wants to tell stream set-up from stray data can.
func IsUDPConnectMsg(b []byte) bool {
	if len(b) != 4 {
		return false
	}
	switch string(b) {
	case UDPConnectMsg, UDPConnectReply, udpLegacyMsg, udpLegacyMsgBE:
		return true
	}
	return false
}

// UDP data header (wire-protocols.md §4.4), big-endian:
//
//	0        4        8                 12 / 16
//	+--------+--------+-----------------+
//	| tv_sec | tv_usec| seq u32 / u64   | payload …
//	+--------+--------+-----------------+
//
// The sequence number starts at 1 and is 64-bit when the client sent
// udp_counters_64bit. There is no FIN datagram.
const (
	UDPHeaderSize32Bit = 12
	UDPHeaderSize64Bit = 16
)

// UDPHeader is the start of every iperf3 UDP datagram.
type UDPHeader struct {
	Sec  uint32 // sender's send time, seconds
	Usec uint32 // microseconds
	Seq  uint64 // sequence number, from 1
}

// UDPHeaderSize returns the header length for the counter width.
func UDPHeaderSize(counters64 bool) int {
	if counters64 {
		return UDPHeaderSize64Bit
	}
	return UDPHeaderSize32Bit
}

// Put writes h at the start of b, which must hold UDPHeaderSize(counters64)
// bytes, and returns the header length. With 32-bit counters the sequence
// number is truncated to its low 32 bits, as iperf3 does.
func (h UDPHeader) Put(b []byte, counters64 bool) (int, error) {
	n := UDPHeaderSize(counters64)
	if len(b) < n {
		return 0, fmt.Errorf("encoding iperf3 udp header: buffer of %d bytes, need %d", len(b), n)
	}
	binary.BigEndian.PutUint32(b[0:], h.Sec)
	binary.BigEndian.PutUint32(b[4:], h.Usec)
	if counters64 {
		binary.BigEndian.PutUint64(b[8:], h.Seq)
	} else {
		binary.BigEndian.PutUint32(b[8:], uint32(h.Seq))
	}
	return n, nil
}

// DecodeUDPHeader reads the header at the start of datagram b.
func DecodeUDPHeader(b []byte, counters64 bool) (UDPHeader, error) {
	n := UDPHeaderSize(counters64)
	if len(b) < n {
		return UDPHeader{}, fmt.Errorf("decoding iperf3 udp header: %d-byte datagram, need %d", len(b), n)
	}
	h := UDPHeader{Sec: binary.BigEndian.Uint32(b[0:]), Usec: binary.BigEndian.Uint32(b[4:])}
	if counters64 {
		h.Seq = binary.BigEndian.Uint64(b[8:])
	} else {
		h.Seq = uint64(binary.BigEndian.Uint32(b[8:]))
	}
	return h, nil
}
