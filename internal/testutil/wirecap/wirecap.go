// Package wirecap captures the headers of packets on the loopback interface
// for tests that check what actually went on the wire (MSS option in a SYN,
// TOS/traffic class, TTL/hop limit, source ports), independently of
// wirebench's own output.
//
// It reads an AF_PACKET socket (Linux, root); Start skips the test
// elsewhere. The capture is bounded: a read timeout of 50 ms lets Stop end it
// promptly, and at most MaxPackets headers are kept.
package wirecap

import (
	"net/netip"
	"time"
)

// MaxPackets is the most packets one capture keeps.
const MaxPackets = 200000

// Packet is the parsed headers of one IPv4 or IPv6 packet carrying TCP or
// UDP.
type Packet struct {
	IPv6     bool
	TOS      int // IPv4 TOS byte or IPv6 traffic class
	TTL      int // IPv4 TTL or IPv6 hop limit
	Proto    int // 6 TCP, 17 UDP
	Src, Dst netip.AddrPort
	TCPFlags byte   // TCP only
	Seq      uint32 // TCP only: the segment's sequence number
	MSS      int    // the MSS option of a TCP SYN; 0 when absent
	Payload  int    // transport payload bytes
	// Head is a copy of the first bytes of the transport payload (up to
	// HeadLen), e.g. an iperf 2 datagram's sequence id.
	Head []byte
	// At is when the kernel received the packet (SO_TIMESTAMPNS: the
	// wall clock, the only clock packet stamps are taken on; a capture
	// is seconds long, so differences between stamps are durations);
	// zero where the capture has no stamp.
	At time.Time
}

// HeadLen is how many payload bytes a Packet keeps in Head.
const HeadLen = 16

// SnapLen is how much of each packet a capture keeps: the largest IPv6 and
// TCP headers (40 + 60 bytes) and HeadLen bytes of payload, rounded up.
const SnapLen = 128

// SYN reports whether p is a TCP SYN (with or without ACK).
func (p Packet) SYN() bool { return p.Proto == 6 && p.TCPFlags&0x02 != 0 }

// Parse reads the IP and transport headers of pkt (starting at the IP
// header); ok is false for anything else or for headers cut short. The
// payload may be cut short, as a capture keeps only the first SnapLen
// bytes of a packet: Payload is the length the headers give.
func Parse(pkt []byte) (p Packet, ok bool) {
	if len(pkt) < 1 {
		return p, false
	}
	var l4 []byte // the transport header and what was captured of its payload
	var l4len int // the transport segment's length, from the IP header
	var src, dst netip.Addr
	switch pkt[0] >> 4 {
	case 4:
		if len(pkt) < 20 {
			return p, false
		}
		ihl := int(pkt[0]&0x0f) * 4
		total := int(pkt[2])<<8 | int(pkt[3])
		if ihl < 20 || total < ihl || len(pkt) < ihl {
			return p, false
		}
		p.TOS, p.TTL, p.Proto = int(pkt[1]), int(pkt[8]), int(pkt[9])
		src, dst = netip.AddrFrom4([4]byte(pkt[12:16])), netip.AddrFrom4([4]byte(pkt[16:20]))
		l4, l4len = pkt[ihl:min(total, len(pkt))], total-ihl
	case 6:
		if len(pkt) < 40 {
			return p, false
		}
		p.IPv6 = true
		p.TOS = int(pkt[0]&0x0f)<<4 | int(pkt[1]>>4)
		plen := int(pkt[4])<<8 | int(pkt[5])

		p.Proto, p.TTL = int(pkt[6]), int(pkt[7])
		src, dst = netip.AddrFrom16([16]byte(pkt[8:24])), netip.AddrFrom16([16]byte(pkt[24:40]))
		l4, l4len = pkt[40:min(40+plen, len(pkt))], plen
	default:
		return p, false
	}
	if len(l4) < 8 || l4len < 8 {
		return p, false
	}
	sp, dp := uint16(l4[0])<<8|uint16(l4[1]), uint16(l4[2])<<8|uint16(l4[3])
	p.Src, p.Dst = netip.AddrPortFrom(src, sp), netip.AddrPortFrom(dst, dp)
	switch p.Proto {
	case 17:
		p.Payload = l4len - 8
		p.Head = head(l4[8:])
	case 6:
		if len(l4) < 20 {
			return p, false
		}
		off := int(l4[12]>>4) * 4
		if off < 20 || off > len(l4) || off > l4len {
			return p, false
		}
		p.TCPFlags = l4[13]
		p.Seq = uint32(l4[4])<<24 | uint32(l4[5])<<16 | uint32(l4[6])<<8 | uint32(l4[7])
		p.Payload = l4len - off
		p.Head = head(l4[off:])
		p.MSS = mssOption(l4[20:off])
	default:
		return p, false
	}
	return p, true
}

// head copies the first HeadLen bytes of payload (nil when empty).
func head(payload []byte) []byte {
	if len(payload) == 0 {
		return nil
	}
	return append([]byte(nil), payload[:min(len(payload), HeadLen)]...)
}

// mssOption finds the MSS option (kind 2, length 4) among TCP options.
func mssOption(opts []byte) int {
	for i := 0; i < len(opts); {
		switch opts[i] {
		case 0:
			return 0
		case 1:
			i++
			continue
		}
		if i+1 >= len(opts) || opts[i+1] < 2 || i+int(opts[i+1]) > len(opts) {
			return 0
		}
		if opts[i] == 2 && opts[i+1] == 4 {
			return int(opts[i+2])<<8 | int(opts[i+3])
		}
		i += int(opts[i+1])
	}
	return 0
}

// Stats says what a capture may have missed, so that a test can tell its
// own capture's loss from the product's.
type Stats struct {
	KernelDrops uint32 // packets the kernel dropped: the capture's queue was full
	Truncated   int    // reads cut short by the read buffer
	Unparsed    int    // packets that were not IPv4/IPv6 TCP/UDP or were cut short
	OverMax     int    // packets past MaxPackets
	Drained     int    // packets still queued when Stop was called, read then
	StatsErr    string // why the kernel's drop count could not be read
}

// Lost reports whether the capture itself may have missed packets.
func (s Stats) Lost() bool {
	return s.KernelDrops > 0 || s.Truncated > 0 || s.OverMax > 0 || s.StatsErr != ""
}
