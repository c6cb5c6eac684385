package ping

// Largest echo payloads: an IPv4 datagram is at most 65535 bytes with a
// 20-byte header and an 8-byte ICMP header; an IPv6 payload (ICMPv6 header
// included) is at most 65535 bytes.
const (
	MaxPayload4 = 65535 - 20 - 8
	MaxPayload6 = 65535 - 8
)

// MaxPayload is the largest echo payload for the address family.
func MaxPayload(v6 bool) int {
	if v6 {
		return MaxPayload6
	}
	return MaxPayload4
}

// Ladder returns the payload sizes on either side of every fragment
// boundary for a path MTU: the largest payload that goes in n fragments and
// the smallest that needs n+1, for every n, ending with the largest payload
// there is. For MTU 1500 and IPv4: 1472, 1473, 2952, 2953, …, 65112, 65113,
// 65507. It returns nil for an MTU too small to carry an echo.
func Ladder(mtu int, v6 bool) []int {
	hdr, frag := 20, 0
	if v6 {
		hdr, frag = 40, 8
	}
	single := mtu - hdr - 8           // largest payload in one packet
	per := (mtu - hdr - frag) / 8 * 8 // bytes of datagram per non-last fragment
	if single < 1 || per < 8 {
		return nil
	}
	maxp := MaxPayload(v6)
	var out []int
	add := func(sizes ...int) {
		for _, s := range sizes {
			if s <= maxp && (len(out) == 0 || s > out[len(out)-1]) {
				out = append(out, s)
			}
		}
	}
	add(single, single+1)
	for n := 2; n*per-8 < maxp; n++ {
		add(n*per-8, n*per-8+1)
	}
	add(maxp)
	return out
}

// Fragments is the number of IP packets an echo with this payload takes
// on a path with this MTU.
func Fragments(payload, mtu int, v6 bool) int {
	hdr, frag := 20, 0
	if v6 {
		hdr, frag = 40, 8
	}
	if payload+8 <= mtu-hdr {
		return 1
	}
	per := (mtu - hdr - frag) / 8 * 8
	if per <= 0 {
		return 0
	}
	return (payload + 8 + per - 1) / per
}
