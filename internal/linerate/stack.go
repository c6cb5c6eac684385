package linerate

import (
	"fmt"
	"strconv"
)

// Transport is what rides on IP.
type Transport int

// Transports.
const (
	UDP  Transport = iota // 8-byte header
	TCP                   // 20-byte header, 32 with the timestamps option
	ICMP                  // echo: 8-byte header
	Raw                   // no IP, no transport: the payload is the whole L2 payload
)

// String names the transport.
func (t Transport) String() string {
	switch t {
	case UDP:
		return "udp"
	case TCP:
		return "tcp"
	case ICMP:
		return "icmp"
	case Raw:
		return "raw"
	}
	return "transport(" + strconv.Itoa(int(t)) + ")"
}

// ParseTransport reads "udp", "tcp", "icmp" or "raw".
func ParseTransport(s string) (Transport, error) {
	for _, t := range []Transport{UDP, TCP, ICMP, Raw} {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown protocol %q: want udp, tcp, icmp or raw", s)
}

// Stack is the protocol stack above the medium.
type Stack struct {
	IPv6          bool
	Transport     Transport
	TCPTimestamps bool // TCP carries the 12-byte timestamps option (Linux default)
	VLAN          bool // frames carry an 802.1Q tag
	// MTU is the largest IP packet; 0 means 1500.
	MTU int
}

// Header sizes in bytes.
const (
	IPv4Header     = 20
	IPv6Header     = 40
	IPv6FragHeader = 8
	UDPHeader      = 8
	TCPHeader      = 20
	TCPTimestamps  = 12
	ICMPHeader     = 8
	VLANTag        = 4
	maxIPv4Total   = 65535
	maxIPv6Payload = 65535
)

func (s Stack) mtu() int {
	if s.MTU == 0 {
		return 1500
	}
	return s.MTU
}

func (s Stack) ipHeader() int {
	switch {
	case s.Transport == Raw:
		return 0
	case s.IPv6:
		return IPv6Header
	}
	return IPv4Header
}

// TransportHeader is the transport header size in bytes.
func (s Stack) TransportHeader() int {
	switch s.Transport {
	case UDP:
		return UDPHeader
	case ICMP:
		return ICMPHeader
	case TCP:
		if s.TCPTimestamps {
			return TCPHeader + TCPTimestamps
		}
		return TCPHeader
	}
	return 0
}

// MSS is the TCP maximum segment payload for this stack: the MTU less the
// IP and TCP headers (and the timestamps option when on).
func (s Stack) MSS() int { return s.mtu() - s.ipHeader() - s.TransportHeader() }

// MaxPayload is the largest payload a single datagram (or TCP segment, or
// raw frame) can carry on this stack.
func (s Stack) MaxPayload() int {
	switch {
	case s.Transport == Raw || s.Transport == TCP:
		return s.MSS()
	case s.IPv6:
		return maxIPv6Payload - s.TransportHeader()
	}
	return maxIPv4Total - IPv4Header - s.TransportHeader()
}

// DefaultPayload is the payload calc assumes when none is given: iperf's
// 1470 bytes for UDP, the MSS for TCP, ping's 56 bytes for ICMP, the
// largest frame for raw.
func (s Stack) DefaultPayload() int {
	switch s.Transport {
	case UDP:
		return min(1470, s.MaxPayload())
	case ICMP:
		return 56
	}
	return s.MSS()
}

// Validate checks the stack and a payload size against each other.
func (s Stack) Validate(payload int) error {
	if s.MTU != 0 && (s.MTU < 68 || s.MTU > 65535) {
		return fmt.Errorf("invalid MTU %d: want 68 to 65535", s.MTU)
	}
	if s.IPv6 && s.mtu() < 1280 {
		return fmt.Errorf("invalid MTU %d for IPv6: want at least 1280", s.mtu())
	}
	if payload < 0 {
		return fmt.Errorf("invalid payload %d: want zero or more bytes", payload)
	}
	if max := s.MaxPayload(); payload > max {
		return fmt.Errorf("payload %d too large for %s: at most %d bytes", payload, s, max)
	}
	return nil
}

// String describes the stack, like "udp/ipv4 mtu 1500".
func (s Stack) String() string {
	ip := "ipv4"
	if s.IPv6 {
		ip = "ipv6"
	}
	out := s.Transport.String()
	if s.Transport != Raw {
		out += "/" + ip
	}
	if s.Transport == TCP && s.TCPTimestamps {
		out += "+timestamps"
	}
	if s.VLAN {
		out += " vlan"
	}
	return out + " mtu " + strconv.Itoa(s.mtu())
}

// fragments splits an IP payload of n bytes into the IP payload of each
// fragment: every fragment but the last carries a multiple of 8 bytes.
func (s Stack) fragments(n int) []int {
	room := s.mtu() - s.ipHeader()
	if s.Transport == Raw || n <= room {
		return []int{n}
	}
	if s.IPv6 {
		room -= IPv6FragHeader
	}
	room &^= 7
	var out []int
	for n > room {
		out = append(out, room)
		n -= room
	}
	return append(out, n)
}

// RawPayload is the L2 payload of an Ethernet-style frame of frame bytes,
// counted from the header to the FCS as RFC 2544 counts frame sizes, on
// stack s (whose VLAN tag counts in the frame). Use it with
// Transport Raw.
func RawPayload(s Stack, frame int) (int, error) {
	hdr := 14 + 4
	if s.VLAN {
		hdr += VLANTag
	}
	p := frame - hdr
	if p < 0 || p > s.mtu() {
		return 0, fmt.Errorf("invalid frame size %d: want %d to %d bytes (MTU %d)", frame, hdr, s.mtu()+hdr, s.mtu())
	}
	return p, nil
}
