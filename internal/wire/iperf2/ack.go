package iperf2

// CLIENTHDRACK, TCP server -> client: wire-protocols.md §2.2 (iperf 2.1.8 payloads.h client_hdr_ack;
// Listener::client_test_ack).
//
//	 0 | type = 2 (CLIENTHDRACK)                        |
//	 4 | length = 28 (52 with the timestamps)           |
//	 8 | flags = 0                                      |
//	12 | version_u                                      |
//	16 | version_l                                      |
//	20 | reserved1 = 0                                  |
//	24 | reserved2 = 0                                  |
//	28 | sent, sentrx, ack timestamps: 3 × (sec, usec)  |  only with --trip-times (length 52)
//
// The 2.1.8 server sends it when the flags have EXTEND without VERSION2, or V2PEERDETECT; a 2.1 client reads
// it only with -X, so a client must tolerate 28 or 52 unsolicited bytes at the start of the stream.

import "encoding/binary"

// Message types (enum MsgType) and CLIENTHDRACK lengths.
const (
	MsgClientHdrAck = 2

	ClientHdrAckSize   = 28
	ClientHdrAckSizeTS = 52 // with the three trip-times timestamp pairs
)

// AppendClientHdrAck appends the 28-byte CLIENTHDRACK wirebench sends as a TCP server: type 2, length 28,
// flags 0, the 2.1.8 version words, two reserved zero words.
func AppendClientHdrAck(dst []byte) []byte {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, MsgClientHdrAck)
	dst = be.AppendUint32(dst, ClientHdrAckSize)
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, VersionU)
	dst = be.AppendUint32(dst, VersionL)
	dst = be.AppendUint32(dst, 0)
	return be.AppendUint32(dst, 0)
}

// ClientHdrAckLen returns the length of the CLIENTHDRACK b starts with (28 or 52), or 0 when b does not start
// with one. It needs the first 12 bytes (type 2, length 28 or 52, flags 0); the result may exceed len(b), in
// which case the caller must read and discard the rest.
func ClientHdrAckLen(b []byte) int {
	if len(b) < 12 {
		return 0
	}
	be := binary.BigEndian
	if be.Uint32(b) != MsgClientHdrAck || be.Uint32(b[8:]) != 0 {
		return 0
	}
	switch n := be.Uint32(b[4:]); n {
	case ClientHdrAckSize, ClientHdrAckSizeTS:
		return int(n)
	}
	return 0
}

// NeedsClientHdrAck reports whether a TCP server must answer a client header with these flags with a
// CLIENTHDRACK: EXTEND without VERSION2 (a plain 2.1 client), or V2PEERDETECT (-X). Pure v1 headers get none.
func NeedsClientHdrAck(flags uint32) bool {
	return flags&FlagExtend != 0 && flags&FlagVersion2 == 0 || flags&FlagV2PeerDetect != 0
}
