package wirecap

import (
	"bytes"
	"net/netip"
	"reflect"
	"testing"
)

// synV4 is an IPv4 TCP SYN from 127.0.0.1:40000 to 127.0.0.2:5001 with TOS
// 0x10, TTL 9, sequence number 1 and the options NOP, NOP, MSS 536.
var synV4 = []byte{
	0x45, 0x10, 0, 48, 0, 0, 0x40, 0, 9, 6, 0, 0, 127, 0, 0, 1, 127, 0, 0, 2,
	0x9c, 0x40, 0x13, 0x89, 0, 0, 0, 1, 0, 0, 0, 0, 0x70, 0x02, 0xff, 0xff, 0, 0, 0, 0,
	1, 1, 2, 4, 0x02, 0x18, 0, 0,
}

func TestParseIPv4SYN(t *testing.T) {
	p, ok := Parse(synV4)
	if !ok {
		t.Fatal("not parsed")
	}
	want := Packet{TOS: 0x10, TTL: 9, Proto: 6, Src: netip.MustParseAddrPort("127.0.0.1:40000"),
		Dst: netip.MustParseAddrPort("127.0.0.2:5001"), TCPFlags: 0x02, Seq: 1, MSS: 536}
	if !reflect.DeepEqual(p, want) || !p.SYN() {
		t.Errorf("Parse = %+v, want %+v", p, want)
	}
}

func TestParseIPv6UDP(t *testing.T) {
	pkt := make([]byte, 40+8+5)
	pkt[0], pkt[1] = 0x60|0x01, 0x00 // version 6, traffic class 0x10
	pkt[4], pkt[5], pkt[6], pkt[7] = 0, 13, 17, 64
	pkt[23], pkt[39] = 1, 1 // ::1 -> ::1
	pkt[40], pkt[41], pkt[42], pkt[43] = 0x17, 0x70, 0x13, 0x89
	copy(pkt[48:], "hello")
	p, ok := Parse(pkt)
	if !ok || !p.IPv6 || p.TOS != 0x10 || p.TTL != 64 || p.Proto != 17 || p.Payload != 5 || !bytes.Equal(p.Head, []byte("hello")) ||
		p.Src != netip.MustParseAddrPort("[::1]:6000") || p.Dst.Port() != 5001 {
		t.Errorf("Parse = %+v, %v", p, ok)
	}
}

// TestParseCapturedPrefix: a capture keeps the first SnapLen bytes; the
// payload's length comes from the headers, and Head from what was kept.
func TestParseCapturedPrefix(t *testing.T) {
	pkt := make([]byte, 1000)
	copy(pkt, []byte{0x45, 0, 1000 >> 8, 1000 & 0xff, 0, 0, 0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1,
		0x17, 0x70, 0x13, 0x89, 980 >> 8, 980 & 0xff, 0, 0, 0xff, 0xff, 0xff, 0xfe})
	p, ok := Parse(pkt[:SnapLen])
	if !ok || p.Payload != 972 || !bytes.Equal(p.Head, append([]byte{0xff, 0xff, 0xff, 0xfe}, make([]byte, 12)...)) {
		t.Errorf("Parse of the first %d bytes = %+v, %v; want payload 972 and 16 bytes of head", SnapLen, p, ok)
	}
	if p, ok := Parse(pkt[:30]); !ok || p.Payload != 972 || len(p.Head) != 2 {
		t.Errorf("Parse of the first 30 bytes = %+v, %v; want payload 972 and 2 bytes of head", p, ok)
	}
}

func TestParseRejectsShort(t *testing.T) {
	for n := range synV4 {
		if p, ok := Parse(synV4[:n]); ok {
			t.Errorf("Parse of %d of %d bytes = %+v, want not ok", n, len(synV4), p)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(synV4)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, ok := Parse(b)
		if ok && (p.Payload < 0 || p.MSS < 0 || p.MSS > 65535 || len(p.Head) > HeadLen || len(p.Head) > p.Payload) {
			t.Fatalf("Parse(%x) = %+v", b, p)
		}
	})
}
