package echo

// Wire format of one echo message (all integers big-endian). The same layout
// is used on UDP (one message per datagram) and TCP (messages back to back).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+---------------------------------------------------------------+
//	|              magic "!WBE" (0x21 0x57 0x42 0x45)               |  0
//	+---------------+---------------+-------------------------------+
//	|  version (1)  |     kind      |    length (whole message)     |  4
//	+---------------+---------------+-------------------------------+
//	|                      request id (64 bits)                     |  8
//	|                                                               |
//	+---------------------------------------------------------------+
//	|          client send time (64 bits, ns, client's clock)       | 16
//	|                                                               |
//	+---------------------------------------------------------------+
//	|                 padding (zeros) up to length                  | 24
//	+---------------------------------------------------------------+
//
// kind: 1 request, 2 reply (the request with this byte changed), 3 bye (the
// client is done: forget this UDP source, close this TCP connection).
//
// Why "!WBE": the server tells protocols apart by the first four bytes (see
// session.TCPProtocol). Real iperf2 clients start with a flags word
// (0x80000000, 0x88000000, 0xC8000000, ...), zperf and ESP-IDF with zeros, a
// datagram counter or the ASCII pattern "0123", and iperf3 with a cookie in
// the alphabet a-z2-7; "!WBE" is none of these. Its first byte, 0x21, also
// has none of iperf2's VERSION1 (0x80), EXTEND (0x40) or VERSION2 (0x04)
// bits, so a real iperf2 server that receives an echo probe treats it as
// plain data instead of waiting for a header: the probe then simply gets no
// reply. ("WBE1" would not do: 'W' = 0x57 carries the EXTEND bit.)

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Protocol constants.
const (
	// Magic is the first four bytes of every message.
	Magic = "!WBE"
	// Version is the format version this package speaks.
	Version = 1
	// HeaderLen is the size of the fixed header, the smallest message.
	HeaderLen = 24
	// MaxLen is the largest message (the length field is 16 bits; a UDP
	// message is further limited to MaxUDPLen).
	MaxLen = 65535
	// MaxUDPLen is the largest UDP message over IPv4.
	MaxUDPLen = 65507
)

// Kind is a message's type.
type Kind uint8

// Message kinds.
const (
	KindRequest Kind = 1
	KindReply   Kind = 2
	KindBye     Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindReply:
		return "reply"
	case KindBye:
		return "bye"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Message is a decoded echo message header.
type Message struct {
	Kind Kind
	// Len is the whole message's length in bytes, header included.
	Len int
	// ID numbers the requests of one client.
	ID uint64
	// Sent is the client's send time in nanoseconds on its own clock; the
	// server echoes it unread.
	Sent int64
}

// Decoding errors.
var (
	ErrShort   = errors.New("echo: message shorter than its header")
	ErrMagic   = errors.New("echo: bad magic")
	ErrVersion = errors.New("echo: unknown version")
	ErrKind    = errors.New("echo: unknown kind")
	ErrLength  = errors.New("echo: bad length")
)

// HasMagic reports whether b starts with the magic (b may be just the first
// four bytes of a stream).
func HasMagic(b []byte) bool {
	return len(b) >= 4 && string(b[:4]) == Magic
}

// Append appends m, padded with zeros to m.Len bytes (at least HeaderLen),
// to dst.
func Append(dst []byte, m Message) []byte {
	n := max(m.Len, HeaderLen)
	var h [HeaderLen]byte
	copy(h[:], Magic)
	h[4] = Version
	h[5] = byte(m.Kind)
	binary.BigEndian.PutUint16(h[6:], uint16(n))
	binary.BigEndian.PutUint64(h[8:], m.ID)
	binary.BigEndian.PutUint64(h[16:], uint64(m.Sent))
	dst = append(dst, h[:]...)
	return append(dst, make([]byte, n-HeaderLen)...)
}

// ParseHeader decodes the fixed header at the start of b; the padding need
// not be there yet (a TCP reader reads the header first).
func ParseHeader(b []byte) (Message, error) {
	if len(b) < HeaderLen {
		return Message{}, ErrShort
	}
	if !HasMagic(b) {
		return Message{}, ErrMagic
	}
	if b[4] != Version {
		return Message{}, fmt.Errorf("%w %d", ErrVersion, b[4])
	}
	m := Message{
		Kind: Kind(b[5]),
		Len:  int(binary.BigEndian.Uint16(b[6:])),
		ID:   binary.BigEndian.Uint64(b[8:]),
		Sent: int64(binary.BigEndian.Uint64(b[16:])),
	}
	if m.Kind < KindRequest || m.Kind > KindBye {
		return Message{}, fmt.Errorf("%w %d", ErrKind, b[5])
	}
	if m.Len < HeaderLen {
		return Message{}, fmt.Errorf("%w %d: under the %d-byte header", ErrLength, m.Len, HeaderLen)
	}
	return m, nil
}

// Parse decodes a whole message (a UDP datagram): b must be exactly as long
// as its length field says.
func Parse(b []byte) (Message, error) {
	m, err := ParseHeader(b)
	if err != nil {
		return m, err
	}
	if m.Len != len(b) {
		return Message{}, fmt.Errorf("%w %d: the datagram has %d bytes", ErrLength, m.Len, len(b))
	}
	return m, nil
}

// setKind rewrites the kind byte of an encoded message in place.
func setKind(b []byte, k Kind) { b[5] = byte(k) }
