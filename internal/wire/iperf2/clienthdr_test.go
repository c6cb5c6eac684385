package iperf2

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

// TestAppendFlagsTable reproduces every row of the §1.3 "Flags iperf 2.1.8 actually sends" table that a
// 60-byte header can express (trip-times and bounceback add structs this codec does not marshal).
func TestAppendFlagsTable(t *testing.T) {
	tests := []struct {
		name      string
		udp       bool
		flags     uint32 // added to NewClientHeader's
		upper     uint16
		wantFlags uint32
		wantLen   int
	}{
		{"udp plain", true, 0, 0, 0x48010098, 60},
		{"udp -r", true, FlagVersion1, 0, 0xC8010098, 60},
		{"udp -R", true, FlagVersion2 | FlagUDPTests, UpperReverse, 0x6C010098, 60},
		{"tcp plain", false, 0, 0, 0x40010078, 60},
		{"tcp -r", false, FlagVersion1, 0, 0xC0010078, 60},
		{"tcp -d", false, FlagVersion1 | FlagRunNow, 0, 0xC0010079, 60},
		{"tcp -R", false, FlagVersion2, UpperReverse, 0x44010078, 60},
		{"tcp --full-duplex", false, FlagVersion2, UpperFullDuplex, 0x44010078, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewClientHeader(tt.udp, 1, 5001)
			h.Flags |= tt.flags
			h.UpperFlags |= tt.upper
			h.Amount = AmountForDuration(2 * time.Second)
			var b []byte
			if tt.udp {
				b = h.AppendUDPTo(nil)
			} else {
				b = h.AppendTo(nil)
			}
			if len(b) != tt.wantLen || h.Len() != tt.wantLen {
				t.Fatalf("len = %d (Len() %d), want %d", len(b), h.Len(), tt.wantLen)
			}
			if got := binary.BigEndian.Uint32(b); got != tt.wantFlags {
				t.Errorf("flags = %08X, want %08X", got, tt.wantFlags)
			}
			if got := binary.BigEndian.Uint16(b[32:]); got != tt.upper {
				t.Errorf("upperflags = %04X, want %04X", got, tt.upper)
			}
			if got := hex.EncodeToString(b[20:24]); got != "ffffff38" {
				t.Errorf("amount = %s, want ffffff38 (-t 2)", got)
			}
			if got := hex.EncodeToString(b[36:44]); got != "0002000100080003" {
				t.Errorf("version words = %s, want 00020001 00080003", got)
			}
			if h.Flags&FlagLenBit != 0 {
				t.Errorf("AppendTo modified h.Flags")
			}
		})
	}
}

// TestCapturedClientHeaders checks that the captured 2.1.8 headers parse to what was asked on its command line
// and that re-marshalling them reproduces the captured bytes exactly.
func TestCapturedClientHeaders(t *testing.T) {
	tests := []struct {
		name      string
		b         []byte
		udp       bool
		port      int32
		bufLen    int32
		dur       time.Duration
		rate      uint64
		upper     uint16
		wantFlags uint32
	}{
		{"udp -l 200 -b 20k -t 1", capUDPClientFirst[16:76], true, 15011, 200, time.Second, 20000, 0, 0x48010098},
		{"udp -r -L 15016", capUDPClientRFirst[16:76], true, 15016, 200, time.Second, 20000, 0, 0xC8010098},
		{"tcp -t 2", capTCPClientHdr, false, 15012, 0, 2 * time.Second, 0, 0, 0x40010078},
		{"tcp -R -t 2", capTCPClientHdrR, false, 15017, 0, 2 * time.Second, 0, UpperReverse, 0x44010078},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, n, err := ParseClientHeader(tt.b)
			if err != nil || n != 60 {
				t.Fatalf("ParseClientHeader: n=%d err=%v", n, err)
			}
			if h.Flags != tt.wantFlags || h.NumThreads != 1 || h.Port != tt.port || h.BufLen != tt.bufLen {
				t.Errorf("v1 = %+v", h)
			}
			if d, ok := h.Duration(); !ok || d != tt.dur {
				t.Errorf("Duration = %v %v, want %v", d, ok, tt.dur)
			}
			if r, pps := h.Rate(); r != tt.rate || pps {
				t.Errorf("Rate = %d %v, want %d bit/s", r, pps, tt.rate)
			}
			if h.UpperFlags != tt.upper || VersionString(h.VersionU, h.VersionL) != "2.1.8" {
				t.Errorf("upper %04X version %q", h.UpperFlags, VersionString(h.VersionU, h.VersionL))
			}
			if got := ClientHeaderLen(h.Flags, tt.udp); got != 60 {
				t.Errorf("ClientHeaderLen = %d, want 60", got)
			}
			var re []byte
			if tt.udp {
				re = h.AppendUDPTo(nil)
			} else {
				re = h.AppendTo(nil)
			}
			if !bytes.Equal(re, tt.b) {
				t.Errorf("re-marshalled\n%x\nwant\n%x", re, tt.b)
			}
		})
	}
}

func TestClientHeaderRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		h    ClientHeader
	}{
		{"v1 legacy -d", ClientHeader{Flags: FlagVersion1 | FlagRunNow, NumThreads: 1, Port: 5002, BufLen: 1470,
			WinBand: 1000000, Amount: -1000}},
		{"v1 flags 0", ClientHeader{NumThreads: 1, Port: 5001, Amount: AmountForBytes(1 << 20)}},
		{"ext full", ClientHeader{Flags: FlagExtend | FlagSeqNo64b | FlagLenBit | 76<<1, NumThreads: 4, Port: 5001,
			BufLen: 1470, Amount: -6000, Type: 7, Length: 9, UpperFlags: UpperUnitsPPS | UpperReverse,
			LowerFlags: LowerCCA, VersionU: VersionU, VersionL: VersionL, TOS: 0xB8, RateLow: 0xDEADBEEF,
			RateHigh: 0x1200, WritePrefetch: 65536}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.h.AppendUDPTo(nil)
			got, n, err := ParseClientHeader(b)
			if err != nil || n != len(b) || n != tt.h.Len() {
				t.Fatalf("n=%d len=%d err=%v", n, len(b), err)
			}
			if got != tt.h {
				t.Errorf("round trip\n got %+v\nwant %+v", got, tt.h)
			}
		})
	}
}

func TestParseClientHeaderShort(t *testing.T) {
	eh := NewClientHeader(false, 1, 5001)
	ext := eh.AppendTo(nil)
	v1 := (&ClientHeader{Flags: FlagVersion1}).AppendTo(nil)
	tests := []struct {
		name string
		b    []byte
		need int
	}{
		{"empty", nil, 4},
		{"3 bytes", ext[:3], 4},
		{"v1 23", v1[:23], 24},
		{"ext 24", ext[:24], 60},
		{"ext 59", ext[:59], 60},
		{"version2 only 30", append([]byte{0x04, 0, 0, 0}, make([]byte, 26)...), 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, n, err := ParseClientHeader(tt.b)
			var se *ShortError
			if !errors.Is(err, ErrShort) || !errors.As(err, &se) || n != 0 {
				t.Fatalf("err = %v, n = %d; want a ShortError", err, n)
			}
			if se.Need != tt.need || se.Have != len(tt.b) {
				t.Errorf("ShortError = %+v, want need %d have %d", se, tt.need, len(tt.b))
			}
		})
	}
}

func TestParseClientHeader22Barrier(t *testing.T) {
	h := NewClientHeader(false, 1, 5001)
	h.VersionU, h.VersionL = 0x00020002, 0x00010003
	b := binary.BigEndian.AppendUint32(h.AppendTo(nil), 12345)
	got, n, err := ParseClientHeader(b)
	if err != nil || n != 64 || !got.HasBarrier || got.BarrierUsecs != 12345 {
		t.Fatalf("n=%d err=%v barrier=%v %d", n, err, got.HasBarrier, got.BarrierUsecs)
	}
	// A 2.1 peer's trailing bytes are data, not a barrier.
	h.VersionU = VersionU
	b = append(h.AppendTo(nil), 0, 0, 0, 1)
	got, n, err = ParseClientHeader(b)
	if err != nil || n != 60 || got.HasBarrier {
		t.Fatalf("2.1: n=%d err=%v barrier=%v", n, err, got.HasBarrier)
	}
}

func TestClientHeaderLen(t *testing.T) {
	tests := []struct {
		flags uint32
		udp   bool
		want  int
	}{
		{0, false, 0},
		{0x30313233, false, 0}, // "0123" pattern: none of V1/V2/EXTEND
		{FlagVersion1, false, 24},
		{FlagVersion1 | FlagRunNow, false, 24},
		{FlagExtend, false, 60},
		{FlagVersion2, false, 60},
		{0x40010078, false, 60},
		{0x48010098, true, 60},
		{0x48010098, false, 76},
		{0x400100A0, false, 80}, // TCP --trip-times
		{0x40010080, false, 64}, // 2.2.x TCP
		{FlagExtend | FlagLenBit | 4<<1, true, 0},
		{FlagExtend | FlagLenBit | 0x1FE, false, 255},
	}
	for _, tt := range tests {
		if got := ClientHeaderLen(tt.flags, tt.udp); got != tt.want {
			t.Errorf("ClientHeaderLen(%08X, udp=%v) = %d, want %d", tt.flags, tt.udp, got, tt.want)
		}
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		name      string
		v         uint64
		pps       bool
		low, high uint32
	}{
		{"1M", 1_000_000, false, 1_000_000, 0},
		{"default", DefaultUDPRate, false, 1048576, 0},
		{"100G", 100_000_000_000, false, uint32(100_000_000_000 & 0xFFFFFFFF), 23 << 8},
		{"8000pps", 8000, true, 8000, 0},
		{"2^55", 1 << 55, false, 0, (1 << 23) << 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h ClientHeader
			h.UpperFlags = UpperReverse
			h.SetRate(tt.v, tt.pps)
			if h.RateLow != tt.low || h.RateHigh != tt.high {
				t.Errorf("words = %08X %08X, want %08X %08X", h.RateLow, h.RateHigh, tt.low, tt.high)
			}
			if v, pps := h.Rate(); v != tt.v || pps != tt.pps {
				t.Errorf("Rate = %d %v", v, pps)
			}
			if h.UpperFlags&UpperBWSet != 0 || h.UpperFlags&UpperReverse == 0 {
				t.Errorf("upperflags = %04X", h.UpperFlags)
			}
		})
	}
}

func TestAmount(t *testing.T) {
	durs := []struct {
		d    time.Duration
		want int32
	}{
		{2 * time.Second, -200}, {10 * time.Second, -1000}, {time.Millisecond, -1}, {15 * time.Millisecond, -2},
		{0, 0}, {-time.Second, 0}, {1 << 62, -0x7FFFFFFF},
	}
	for _, tt := range durs {
		if got := AmountForDuration(tt.d); got != tt.want {
			t.Errorf("AmountForDuration(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
	bytesTests := []struct {
		n    int64
		want int32
	}{{1 << 20, 1 << 20}, {0x80000005, 5}, {0, 0}, {-3, 0}}
	for _, tt := range bytesTests {
		if got := AmountForBytes(tt.n); got != tt.want {
			t.Errorf("AmountForBytes(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
	h := ClientHeader{Amount: -200}
	if d, ok := h.Duration(); !ok || d != 2*time.Second {
		t.Errorf("Duration = %v %v", d, ok)
	}
	if _, ok := h.ByteCount(); ok {
		t.Errorf("ByteCount ok for a duration")
	}
	h.Amount = -0x80000000
	if d, ok := h.Duration(); !ok || d != 0x80000000*10*time.Millisecond {
		t.Errorf("Duration(MinInt32) = %v", d)
	}
	h.Amount = 1000
	if n, ok := h.ByteCount(); !ok || n != 1000 {
		t.Errorf("ByteCount = %d %v", n, ok)
	}
}

func TestVersionString(t *testing.T) {
	tests := []struct {
		u, l uint32
		want string
	}{
		{VersionU, VersionL, "2.1.8"}, {0x00020002, 0x00010001, "2.2.1-rc"}, {0x00020000, 0x000D0000, "2.0.13-dev"},
		{0x00020001, 0x00090009, "2.1.9-kind9"}, {0, 0, ""},
	}
	for _, tt := range tests {
		if got := VersionString(tt.u, tt.l); got != tt.want {
			t.Errorf("VersionString(%08X, %08X) = %q, want %q", tt.u, tt.l, got, tt.want)
		}
	}
}
