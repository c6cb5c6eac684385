package iperf2

import (
	"bytes"
	"testing"
	"time"
)

// legacyDatagram builds a 2.0.5/old-zperf datagram: 12-byte header, client_hdr_v1 at 12, then fill.
func legacyDatagram(id int64, flags uint32, fill byte) []byte {
	b := make([]byte, 12, 200)
	PutDatagram(b, LayoutLegacy, id, time.Unix(1000, 0))
	h := ClientHeader{Flags: flags, NumThreads: 1, Port: 5001, BufLen: 200, WinBand: 10, Amount: 200}
	b = h.AppendTo(b)
	return append(b, bytes.Repeat([]byte{fill}, 200-len(b))...)
}

func TestDetectUDPLayout(t *testing.T) {
	esp := make([]byte, 1470)
	esp[3] = 7 // ESP-IDF: 32-bit sequence at 0, zeros elsewhere
	// zperf-new: 16-byte header with id2 left as 'zzzz', header at 16 with flags 0.
	zperfNew := bytes.Repeat([]byte{'z'}, 200)
	PutDatagram(zperfNew, LayoutLegacy, 1, time.Unix(1000, 0))
	(&ClientHeader{NumThreads: 1, Port: 5001}).AppendTo(zperfNew[:16])
	random := mustHex("9f3c21d7e0b45a18c6f2773e0d91ab5c" + "04b7e2f19a6c3d58" + "71e0c4a9b3d5f286")
	tests := []struct {
		name string
		b    []byte
		want Layout
	}{
		{"2.1.8 plain", capUDPClientFirst, LayoutModern},
		{"2.1.8 -r", capUDPClientRFirst, LayoutModern},
		{"2.1.8 FIN datagram", capReportEcho, LayoutModern},
		{"2.0.5 flags 0", legacyDatagram(0, 0, '0'), LayoutLegacy},
		{"2.0.5 -r", legacyDatagram(3, 0x80000000, '0'), LayoutLegacy},
		{"2.0.5 -d", legacyDatagram(3, 0x80000001, '0'), LayoutLegacy},
		{"zperf legacy", legacyDatagram(0, 0, 'z'), LayoutLegacy},
		{"zperf-new zzzz id2", zperfNew, LayoutModern},
		{"ESP seq + zeros", esp, LayoutModern},
		{"random bytes (EXTEND bit at 16)", random, LayoutModern},
		{"numThreads 257", func() []byte { b := legacyDatagram(0, 0, 0); b[14+4] = 1; b[15+4] = 1; return b }(),
			LayoutModern},
		{"19 bytes", legacyDatagram(0, 0, 0)[:19], LayoutModern},
		{"empty", nil, LayoutModern},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DetectUDPLayout(tt.b); got != tt.want {
				t.Errorf("DetectUDPLayout = %v, want %v (word 12/16: %x %x)", got, tt.want, tt.b[12:16], tt.b[16:20])
			}
		})
	}
}

func TestFINID(t *testing.T) {
	// 2.1.8 sent 15 data datagrams (ids 1..15), then the captured FINs −16, −17, −18.
	for retry, hexFIN := range capUDPClientFINs {
		id, _, _, _ := ParseDatagram(mustHex(hexFIN), LayoutModern, true)
		if got := FINID(LayoutModern, 15, retry); got != id || !IsFIN(got) {
			t.Errorf("modern retry %d: FINID = %d, captured %d", retry, got, id)
		}
	}
	tests := []struct {
		l     Layout
		sent  int64
		retry int
		want  int64
	}{
		{LayoutModern, 0, 0, -1}, {LayoutModern, 130, 0, -131}, {LayoutModern, 130, 199, -330},
		{LayoutModern, 1 << 40, 1, -(1<<40 + 2)},
		{LayoutLegacy, 51, 0, -51}, {LayoutLegacy, 51, 9, -51}, {LayoutLegacy, 0, 0, 0},
	}
	for _, tt := range tests {
		if got := FINID(tt.l, tt.sent, tt.retry); got != tt.want {
			t.Errorf("FINID(%v, %d, %d) = %d, want %d", tt.l, tt.sent, tt.retry, got, tt.want)
		}
	}
	for _, id := range []int64{0, 1, 1 << 40} {
		if IsFIN(id) {
			t.Errorf("IsFIN(%d)", id)
		}
	}
}

// TestIsFlaglessTCPHeader: 2.0.5's and lwiperf's header with flags 0 is
// told from the header-less streams of zperf, ESP-IDF and wirebench raw.
func TestIsFlaglessTCPHeader(t *testing.T) {
	v1 := ClientHeader{NumThreads: 1, Port: 5001, Amount: -1000}
	hdr := v1.AppendTo(nil)
	zperf := append([]byte{0, 0, 0, 0}, bytes.Repeat([]byte("z"), 60)...)
	esp := make([]byte, 64)
	raw := []byte("\x00\x00\x00\x0045678901234567890123456789")
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"2.0.5 header, flags 0", hdr, true},
		{"2.0.5 header, -P 4", (&ClientHeader{NumThreads: 4, Port: 5001, Amount: 1 << 20}).AppendTo(nil), true},
		{"cut short", hdr[:20], false},
		{"zperf", zperf, false},
		{"ESP-IDF", esp, false},
		{"wirebench raw", raw, false},
		{"-r header (flags VERSION1)", (&ClientHeader{Flags: FlagVersion1, NumThreads: 1, Port: 5001}).AppendTo(nil), false},
	} {
		if got := IsFlaglessTCPHeader(tc.b); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
