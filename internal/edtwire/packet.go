package edtwire

import (
	"encoding/binary"
	"net/netip"
)

// Ethernet types the forwarder handles.
const (
	etherIPv4 = 0x0800
	etherIPv6 = 0x86DD
)

// destination returns the IP destination of an Ethernet frame, or the
// zero Addr for anything that is not IPv4 or IPv6.
func destination(f []byte) netip.Addr {
	if len(f) < 14 {
		return netip.Addr{}
	}
	switch binary.BigEndian.Uint16(f[12:14]) {
	case etherIPv4:
		if len(f) >= 14+20 && f[14]>>4 == 4 {
			return netip.AddrFrom4([4]byte(f[30:34]))
		}
	case etherIPv6:
		if len(f) >= 14+40 && f[14]>>4 == 6 {
			return netip.AddrFrom16([16]byte(f[38:54]))
		}
	}
	return netip.Addr{}
}

// decTTL decrements the IPv4 TTL (fixing the header checksum
// incrementally, RFC 1624 eqn. 3) or the IPv6 hop limit of frame f, whose
// destination has been checked. ok is false when it ran out: the frame
// must not be forwarded.
func decTTL(f []byte) (ok bool) {
	if binary.BigEndian.Uint16(f[12:14]) == etherIPv6 {
		if f[21] <= 1 {
			return false
		}
		f[21]--
		return true
	}
	ttl := f[22]
	if ttl <= 1 {
		return false
	}
	old := uint32(binary.BigEndian.Uint16(f[22:24])) // TTL and protocol
	f[22] = ttl - 1
	nw := uint32(binary.BigEndian.Uint16(f[22:24]))
	sum := uint32(^binary.BigEndian.Uint16(f[24:26])) + (^old & 0xffff) + nw
	sum = (sum & 0xffff) + sum>>16
	sum = (sum & 0xffff) + sum>>16
	binary.BigEndian.PutUint16(f[24:26], ^uint16(sum))
	return true
}

// headerLen returns the length of the Ethernet, IP and TCP or UDP headers
// of f, or 0 when it cannot tell (used only to charge a GSO frame).
func headerLen(f []byte) int {
	if len(f) < 14 {
		return 0
	}
	var l4 byte
	var off int
	switch binary.BigEndian.Uint16(f[12:14]) {
	case etherIPv4:
		if len(f) < 34 {
			return 0
		}
		l4, off = f[23], 14+int(f[14]&0x0f)*4
	case etherIPv6:
		if len(f) < 54 {
			return 0
		}
		l4, off = f[20], 54
	default:
		return 0
	}
	switch l4 {
	case 6: // TCP
		if len(f) < off+20 {
			return 0
		}
		return off + int(f[off+12]>>4)*4
	case 17: // UDP
		return off + 8
	}
	return 0
}
