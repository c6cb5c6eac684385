package iperf2

import (
	"encoding/hex"
	"testing"
	"time"
)

func TestLayout(t *testing.T) {
	tests := []struct {
		l       Layout
		n       int
		s       string
		firstID int64
	}{
		{LayoutModern, 16, "modern", 1}, {LayoutLegacy, 12, "legacy", 0}, {Layout(7), 16, "Layout(7)", 1},
	}
	for _, tt := range tests {
		if tt.l.HeaderLen() != tt.n || tt.l.String() != tt.s || tt.l.FirstID() != tt.firstID {
			t.Errorf("%d: HeaderLen %d String %q FirstID %d", int(tt.l), tt.l.HeaderLen(), tt.l.String(),
				tt.l.FirstID())
		}
	}
}

func TestPutDatagramGolden(t *testing.T) {
	ts := time.Unix(0x6b0cb21c, 0x269e*1000+999) // sub-microsecond part is truncated
	tests := []struct {
		name string
		l    Layout
		id   int64
		ts   time.Time
		want string
	}{
		{"modern first", LayoutModern, 1, ts, "000000016b0cb21c0000269e00000000"},
		{"modern FIN", LayoutModern, -16, ts, "fffffff06b0cb21c0000269effffffff"},
		{"modern 64-bit", LayoutModern, 0x1_0000_0002, ts, "000000026b0cb21c0000269e00000001"},
		{"modern zero time", LayoutModern, 5, time.Time{}, "00000005000000000000000000000000"},
		{"legacy", LayoutLegacy, 0, ts, "000000006b0cb21c0000269e"},
		{"legacy FIN", LayoutLegacy, -15, ts, "fffffff16b0cb21c0000269e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := make([]byte, tt.l.HeaderLen()+4)
			PutDatagram(b, tt.l, tt.id, tt.ts)
			if got := hex.EncodeToString(b[:tt.l.HeaderLen()]); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if got := hex.EncodeToString(b[tt.l.HeaderLen():]); got != "00000000" {
				t.Errorf("wrote past the header: %s", got)
			}
		})
	}
}

func TestParseDatagram(t *testing.T) {
	b64 := make([]byte, 16)
	PutDatagram(b64, LayoutModern, 0x7_0000_0001, time.Unix(5, 6000))
	zperf := mustHex("0000000300000001000000027a7a7a7a")
	tests := []struct {
		name      string
		b         []byte
		l         Layout
		seq64     bool
		id        int64
		sec, usec uint32
		ok        bool
	}{
		{"captured first", capUDPClientFirst, LayoutModern, true, 1, 0x6b0cb21a, 0x000d9373, true},
		{"captured FIN", mustHex(capUDPClientFINs[0]), LayoutModern, true, -16, 0x6b0cb21c, 0x269e, true},
		{"FIN without seq64", mustHex(capUDPClientFINs[0]), LayoutModern, false, -16, 0x6b0cb21c, 0x269e, true},
		{"64-bit id", b64, LayoutModern, true, 0x7_0000_0001, 5, 6, true},
		{"64-bit id ignored without flag", b64, LayoutModern, false, 1, 5, 6, true},
		{"zperf-new zzzz id2 ignored", zperf, LayoutModern, false, 3, 1, 2, true},
		{"legacy ignores seq64", zperf, LayoutLegacy, true, 3, 1, 2, true},
		{"modern short", zperf[:15], LayoutModern, false, 0, 0, 0, false},
		{"legacy 12", zperf[:12], LayoutLegacy, false, 3, 1, 2, true},
		{"legacy short", zperf[:11], LayoutLegacy, false, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, sec, usec, ok := ParseDatagram(tt.b, tt.l, tt.seq64)
			if id != tt.id || sec != tt.sec || usec != tt.usec || ok != tt.ok {
				t.Errorf("got %d %d %d %v, want %d %d %d %v", id, sec, usec, ok, tt.id, tt.sec, tt.usec, tt.ok)
			}
		})
	}
}

// timeOf builds the time.Time whose PutDatagram encoding is (sec, usec), for usec < 1e6; larger usec values
// carry into seconds, which the fuzz test tolerates by comparing only the id words.
func timeOf(sec, usec uint32) time.Time {
	if sec == 0 && usec == 0 {
		return time.Time{}
	}
	return time.Unix(int64(sec), int64(usec)*1000)
}
