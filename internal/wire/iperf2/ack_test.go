package iperf2

import (
	"bytes"
	"testing"
)

func TestAppendClientHdrAckGolden(t *testing.T) {
	got := AppendClientHdrAck([]byte{0xAA})
	if got[0] != 0xAA || !bytes.Equal(got[1:], capClientHdrAck) {
		t.Errorf("got %x, want 2.1.8's %x", got[1:], capClientHdrAck)
	}
}

func TestClientHdrAckLen(t *testing.T) {
	ts := append([]byte(nil), capClientHdrAck...)
	ts[7] = 52
	tests := []struct {
		name string
		b    []byte
		want int
	}{
		{"captured", capClientHdrAck, 28},
		{"with data after", append(append([]byte(nil), capClientHdrAck...), "0123456789"...), 28},
		{"trip-times 52", ts, 52},
		{"first 12 bytes suffice", capClientHdrAck[:12], 28},
		{"11 bytes", capClientHdrAck[:11], 0},
		{"pattern data", []byte("0123456789012345678901234567"), 0},
		{"zeros", make([]byte, 28), 0},
		{"bad length", mustHex("000000020000001d00000000"), 0},
		{"nonzero flags", mustHex("000000020000001c00000001"), 0},
	}
	for _, tt := range tests {
		if got := ClientHdrAckLen(tt.b); got != tt.want {
			t.Errorf("%s: ClientHdrAckLen = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestNeedsClientHdrAck(t *testing.T) {
	tests := []struct {
		flags uint32
		want  bool
	}{
		{0x40010078, true},  // TCP plain 2.1
		{0xC0010078, true},  // -r
		{0xC0010079, true},  // -d
		{0x44010078, false}, // -R / --full-duplex
		{0x46010078, true},  // -X with VERSION2
		{0x80000000, false}, // pure v1
		{0x80000001, false},
		{0, false},
	}
	for _, tt := range tests {
		if got := NeedsClientHdrAck(tt.flags); got != tt.want {
			t.Errorf("NeedsClientHdrAck(%08X) = %v, want %v", tt.flags, got, tt.want)
		}
	}
}
