package iperf2

// Flags: wire-protocols.md §1.3 (iperf 2.1.8 payloads.h).
//
// Base flags, the first 32-bit word of the client header (offset B):
//
//	 31 30 29 28 27 26 25 24 23 22 ... 17 16 15 ... 9 8 7 6 5 4 3 2 1 0
//	+--+--+--+--+--+--+--+--+--+--------+--+--+--------------------+--+
//	|V1|EX|UT|KC|64|V2|PD|A1|BB|  ...   |ST|LB|        |  len<<1   |RN|
//	+--+--+--+--+--+--+--+--+--+--------+--+--+--------------------+--+
//	V1 VERSION1  EX EXTEND  UT UDPTESTS  KC KEYCHECK  64 SEQNO64B  V2 VERSION2
//	PD V2PEERDETECT/UDPAVOID2  A1 UDPAVOID1/KEYL1  BB BOUNCEBACK  ST SMALL_TRIPTIMES
//	LB LEN_BIT (bits 1..8 then carry the header length, written as len<<1)  RN RUN_NOW
//
// upperflags and lowerflags are the two 16-bit words at Ext+8 and Ext+10 of client_hdrext.

// Base flags (32-bit word at B+0).
const (
	FlagVersion1       uint32 = 0x80000000 // legacy -r/-d: the server connects back to client_ip:Port
	FlagExtend         uint32 = 0x40000000 // client_hdrext follows client_hdr_v1
	FlagUDPTests       uint32 = 0x20000000 // UDP stateless options present in upperflags
	FlagKeyCheck       uint32 = 0x10000000 // permit key appended; a server without --permit-key drops the test
	FlagSeqNo64b       uint32 = 0x08000000 // UDP id2 (high 32 bits of the sequence number) is valid
	FlagVersion2       uint32 = 0x04000000 // 2.1 -R / --full-duplex; see upperflags
	FlagV2PeerDetect   uint32 = 0x02000000 // -X: the TCP server must send a CLIENTHDRACK (same bit as UDPAVOID2)
	FlagUDPAvoid1      uint32 = 0x01000000 // UDPAVOID1 / KEYL1
	FlagBounceback     uint32 = 0x00800000 // the TCP stream starts with a bounceback header instead
	FlagSmallTripTimes uint32 = 0x00020000 // UDP short-payload trip-times
	FlagLenBit         uint32 = 0x00010000 // header length is carried in FlagLenMask as len<<1
	FlagLenMask        uint32 = 0x000001FE // (flags & FlagLenMask) >> 1 is the header length when FlagLenBit is set
	FlagRunNow         uint32 = 0x00000001 // with FlagVersion1: -d (dual, at once); without RUN_NOW: -r (tradeoff)
)

// ServerFlagExtend in a server report's flags (SERVER_HEADER_EXTEND) marks the transit extension as valid
// (the 2.1.8 server sets it in enhanced or trip-times mode; it fills the fields regardless).
const ServerFlagExtend uint32 = 0x40000000

// MaxHeaderLen is the largest header length iperf 2.1.8 accepts from the LEN field (MAX_HEADER_LEN).
const MaxHeaderLen = 256

// upperflags (16-bit word at Ext+8).
const (
	UpperIsoch         uint16 = 0x0001
	UpperL2EthPIPv6    uint16 = 0x0002
	UpperL2LenCheck    uint16 = 0x0004
	UpperNoUDPFin      uint16 = 0x0008
	UpperTripTime      uint16 = 0x0010
	UpperIsochSettings uint16 = 0x0040
	UpperUnitsPPS      uint16 = 0x0080 // the rate is in packets per second, not bit/s
	UpperBWSet         uint16 = 0x0100
	UpperFQRateSet     uint16 = 0x0200
	UpperReverse       uint16 = 0x0400 // -R: the server sends on the client's connection
	UpperFullDuplex    uint16 = 0x0800 // --full-duplex
	UpperEpochStart    uint16 = 0x1000
	UpperPeriodicBurst uint16 = 0x2000
	UpperWritePrefetch uint16 = 0x4000
	UpperTCPQuickAck   uint16 = 0x8000
)

// lowerflags (16-bit word at Ext+10; 2.2.x only).
const (
	LowerCCA         uint16 = 0x8000
	LowerBarrierTime uint16 = 0x4000
	LowerUDPL4S      uint16 = 0x2000
)
