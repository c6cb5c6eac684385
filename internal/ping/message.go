package ping

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// ICMP protocol numbers (IANA).
const (
	protoICMP   = 1
	protoICMPv6 = 58
)

// ReplyKind says what an incoming ICMP message means to the pinger.
type ReplyKind int

// Reply kinds.
const (
	KindOther       ReplyKind = iota // not for us, or not understood
	KindEchoReply                    // an echo reply
	KindTooBig                       // fragmentation needed (v4) or packet too big (v6) for one of our echoes
	KindUnreachable                  // another error (unreachable, time exceeded) quoting one of our echoes
)

// Reply is an incoming ICMP message reduced to what matching needs.
//
//	echo reply (RFC 792, RFC 4443):
//	 0       8      16              31
//	+-------+-------+---------------+
//	| type  | code  |   checksum    |
//	+-------+-------+---------------+
//	|  identifier   |   sequence    |
//	+---------------+---------------+
//	| payload ...
//
// For error messages ID and Seq come from the quoted echo request, and MTU
// from the next-hop MTU field (v4 type 3 code 4) or the MTU field (v6 type 2).
type Reply struct {
	Kind    ReplyKind
	Type    int
	Code    int
	ID      int
	Seq     int
	Payload []byte // echo reply payload; aliases the parsed buffer
	MTU     int    // for KindTooBig
}

var errShort = errors.New("message too short")

// ParseReply parses one ICMP message (no IP header in front) as received
// on an ICMPv4 (v6 false) or ICMPv6 socket. It never panics on any input.
func ParseReply(b []byte, v6 bool) (Reply, error) {
	if len(b) < 8 {
		return Reply{}, fmt.Errorf("parsing icmp reply: %w (%d bytes)", errShort, len(b))
	}
	r := Reply{Type: int(b[0]), Code: int(b[1])}
	switch {
	case !v6 && r.Type == int(ipv4.ICMPTypeEchoReply), v6 && r.Type == int(ipv6.ICMPTypeEchoReply):
		return parseEcho(b, v6)
	case !v6 && r.Type == int(ipv4.ICMPTypeDestinationUnreachable) && r.Code == 4:
		r.Kind, r.MTU = KindTooBig, int(binary.BigEndian.Uint16(b[6:8]))
	case v6 && r.Type == int(ipv6.ICMPTypePacketTooBig):
		r.Kind, r.MTU = KindTooBig, int(binary.BigEndian.Uint32(b[4:8]))
	case !v6 && (r.Type == int(ipv4.ICMPTypeDestinationUnreachable) || r.Type == int(ipv4.ICMPTypeTimeExceeded)),
		v6 && (r.Type == int(ipv6.ICMPTypeDestinationUnreachable) || r.Type == int(ipv6.ICMPTypeTimeExceeded)):
		r.Kind = KindUnreachable
	default:
		return Reply{Type: r.Type, Code: r.Code}, nil
	}
	id, seq, ok := quotedEcho(b[8:], v6)
	if !ok {
		return Reply{Type: r.Type, Code: r.Code}, nil
	}
	r.ID, r.Seq = id, seq
	return r, nil
}

func parseEcho(b []byte, v6 bool) (Reply, error) {
	proto := protoICMP
	if v6 {
		proto = protoICMPv6
	}
	m, err := icmp.ParseMessage(proto, b)
	if err != nil {
		return Reply{}, fmt.Errorf("parsing icmp echo reply: %w", err)
	}
	e, ok := m.Body.(*icmp.Echo)
	if !ok {
		return Reply{}, fmt.Errorf("parsing icmp echo reply: body is %T", m.Body)
	}
	return Reply{Kind: KindEchoReply, Type: int(b[0]), Code: int(b[1]), ID: e.ID, Seq: e.Seq, Payload: e.Data}, nil
}

// quotedEcho finds the identifier and sequence of the echo request quoted
// in an ICMP error: the original IP header, then at least 8 bytes of it.
func quotedEcho(q []byte, v6 bool) (id, seq int, ok bool) {
	var inner []byte
	if v6 {
		if len(q) < 40 || q[0]>>4 != 6 {
			return 0, 0, false
		}
		next, rest := q[6], q[40:]
		if next == 44 { // fragment header
			if len(rest) < 8 {
				return 0, 0, false
			}
			next, rest = rest[0], rest[8:]
		}
		if next != protoICMPv6 || len(rest) < 8 || rest[0] != byte(ipv6.ICMPTypeEchoRequest) {
			return 0, 0, false
		}
		inner = rest
	} else {
		if len(q) < 20 || q[0]>>4 != 4 {
			return 0, 0, false
		}
		ihl := int(q[0]&0x0f) * 4
		if ihl < 20 || len(q) < ihl+8 || q[9] != protoICMP || q[ihl] != byte(ipv4.ICMPTypeEcho) {
			return 0, 0, false
		}
		inner = q[ihl:]
	}
	return int(binary.BigEndian.Uint16(inner[4:6])), int(binary.BigEndian.Uint16(inner[6:8])), true
}

// StripIPv4Header removes the IPv4 header a raw ICMPv4 socket puts in front
// of every message it reads on Linux.
func StripIPv4Header(b []byte) ([]byte, error) {
	if len(b) < 20 || b[0]>>4 != 4 {
		return nil, fmt.Errorf("stripping ipv4 header: not an ipv4 packet (%d bytes)", len(b))
	}
	ihl := int(b[0]&0x0f) * 4
	if ihl < 20 || len(b) < ihl {
		return nil, fmt.Errorf("stripping ipv4 header: bad header length %d", ihl)
	}
	return b[ihl:], nil
}

// MarshalEcho builds an echo request. For ICMPv6 the checksum is left to
// the kernel, which computes it on ICMPv6 sockets.
func MarshalEcho(v6 bool, id, seq int, payload []byte) ([]byte, error) {
	var typ icmp.Type = ipv4.ICMPTypeEcho
	if v6 {
		typ = ipv6.ICMPTypeEchoRequest
	}
	m := icmp.Message{Type: typ, Body: &icmp.Echo{ID: id & 0xffff, Seq: seq & 0xffff, Data: payload}}
	b, err := m.Marshal(nil)
	if err != nil {
		return nil, fmt.Errorf("marshalling echo request: %w", err)
	}
	return b, nil
}

// Payload fills a payload of size bytes for sequence number seq. The
// pattern depends on both, so a reply carrying another probe's payload, or
// a shifted or damaged one, does not compare equal.
func Payload(seq, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*31 + seq*17 + 0x5a + i>>8)
	}
	return b
}

// PayloadMatches reports whether got is byte for byte the payload sent with
// sequence number seq.
func PayloadMatches(got []byte, seq, size int) bool {
	if len(got) != size {
		return false
	}
	for i, c := range got {
		if c != byte(i*31+seq*17+0x5a+i>>8) {
			return false
		}
	}
	return true
}
