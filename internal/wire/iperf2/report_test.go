package iperf2

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

// capReportWant is what capReportModern says, read field by field from its hex.
var capReportWant = ServerReport{
	Flags:      0x88000000,
	TotalBytes: 2200, // 11 datagrams × 200 bytes (ids 1..10 and the FIN)
	Stop:       107133 * time.Microsecond,
	Datagrams:  11,
	Jitter:     17 * time.Microsecond,
	Transit: TransitStats{
		Min: 110 * time.Microsecond, Max: 265 * time.Microsecond, Sum: 1460 * time.Microsecond,
		Mean: 132 * time.Microsecond, M2: 19704.181818, VD: -3 * time.Microsecond,
		Count: 11, IPGCount: 102, IPGSum: 1,
	},
	HasTransit: true,
}

func TestCapturedReportModern(t *testing.T) {
	r, l, err := ParseServerReport(capReportModern)
	if err != nil || l != LayoutModern {
		t.Fatalf("layout %v err %v", l, err)
	}
	if r != capReportWant {
		t.Errorf("parsed\n%+v\nwant\n%+v", r, capReportWant)
	}
	if got := r.AppendModern(nil, nil); !bytes.Equal(got, capReportModern) {
		t.Errorf("re-marshalled\n%x\nwant\n%x", got, capReportModern)
	}
}

// legacyGolden is a 2.0.5-style report written by hand from §1.5: echo of FIN id −51 (fffffffcd) with its
// timestamp, flags 80000000, 10200 bytes, 2.017 s, 2 lost, 1 out of order, 51 datagrams, jitter 23 µs.
const legacyGolden = "ffffffcd6b0cb2220006f5dc" + "80000000" + "00000000" + "000027d8" + "00000002" + "00004268" +
	"00000002" + "00000001" + "00000033" + "00000000" + "00000017"

var legacyReport = ServerReport{
	Flags: FlagVersion1, TotalBytes: 10200, Stop: 2017 * time.Millisecond, Errors: 2, OutOfOrder: 1,
	Datagrams: 51, Jitter: 23 * time.Microsecond,
}

func TestReportLegacyGolden(t *testing.T) {
	fin := mustHex("ffffffcd6b0cb2220006f5dc" + "00000000000000010000138a")
	r := legacyReport
	r.Flags = 0 // default for legacy is FlagVersion1
	got := r.AppendLegacy(nil, fin)
	if hex.EncodeToString(got) != legacyGolden || len(got) != ReportLenLegacy {
		t.Fatalf("AppendLegacy\n%x\nwant\n%s", got, legacyGolden)
	}
	parsed, l, err := ParseServerReport(got)
	if err != nil || l != LayoutLegacy || parsed != legacyReport {
		t.Errorf("parse: %v %v\n%+v", l, err, parsed)
	}
}

func TestReportCrossVersion(t *testing.T) {
	legacy := mustHex(legacyGolden)
	// 2.0.5 sends its whole buffer (1470 bytes) with stale data after byte 52.
	stale := append(append([]byte(nil), legacy...), bytes.Repeat([]byte{0xFF}, 1470-52)...)
	// zperf-new echoes all 16 FIN bytes (id2 FFFFFFFF at 12 has the VERSION1 bit) and puts the report at 16.
	zperfNew := (&legacyReport).AppendModern(nil, mustHex("ffffffcc6b0cb2220006f5dcffffffff"))[:56]
	zperfNewFlags := legacyReport
	zperfNewFlags.Flags = FlagVersion1
	tests := []struct {
		name   string
		b      []byte
		layout Layout
		want   ServerReport
	}{
		{"2.0.5 52 bytes", legacy, LayoutLegacy, legacyReport},
		{"2.0.5 1470 bytes", stale, LayoutLegacy, legacyReport},
		{"zperf-new 56 bytes", zperfNew, LayoutModern, zperfNewFlags},
		{"2.1.8", capReportModern, LayoutModern, capReportWant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, l, err := ParseServerReport(tt.b)
			if err != nil || l != tt.layout || r != tt.want {
				t.Errorf("layout %v err %v\n got %+v\nwant %+v", l, err, r, tt.want)
			}
		})
	}
}

func TestReport64Bit(t *testing.T) {
	r := ServerReport{
		TotalBytes: 5<<32 + 7, Stop: 90 * time.Second, Errors: 1<<33 + 5, OutOfOrder: 3<<32 + 1,
		Datagrams: 7<<32 + 9, Jitter: 1500 * time.Microsecond,
	}
	b := r.AppendModern(nil, nil)
	if len(b) != ReportLenModern || !bytes.Equal(b[:16], make([]byte, 16)) {
		t.Fatalf("len %d head %x", len(b), b[:16])
	}
	if got := hex.EncodeToString(b[116:]); got != "000000020000000300000007" {
		t.Errorf("high words = %s", got)
	}
	got, l, err := ParseServerReport(b)
	r.Flags, r.HasTransit = DefaultReportFlags, true
	if err != nil || l != LayoutModern || got != r {
		t.Errorf("round trip %v %v\n got %+v\nwant %+v", l, err, got, r)
	}
	// Without SEQNO64B the high words are neither written nor read.
	r.Flags = FlagVersion1
	b = r.AppendModern(nil, nil)
	if !bytes.Equal(b[116:], make([]byte, 12)) {
		t.Errorf("high words written without SEQNO64B: %x", b[116:])
	}
	got, _, _ = ParseServerReport(b)
	if got.Errors != 5 || got.OutOfOrder != 1 || got.Datagrams != 9 || got.TotalBytes != 5<<32+7 {
		t.Errorf("32-bit parse: %+v", got)
	}
	// Legacy keeps only the low words of the counts (bytes are 64-bit in every layout).
	got, _, _ = ParseServerReport(r.AppendLegacy(nil, nil))
	if got.Errors != 5 || got.Datagrams != 9 || got.TotalBytes != 5<<32+7 {
		t.Errorf("legacy parse: %+v", got)
	}
}

func TestReportFinHeaderEcho(t *testing.T) {
	fin := mustHex(capUDPClientFINs[0])
	r := ServerReport{Flags: DefaultReportFlags | ServerFlagExtend, Datagrams: 16}
	b := r.AppendModern(nil, fin)
	if !bytes.Equal(b[:16], fin) || len(b) != 128 {
		t.Errorf("head %x", b[:16])
	}
	if b = r.AppendModern(nil, fin[:5]); !bytes.Equal(b[:16], append(fin[:5:5], make([]byte, 11)...)) {
		t.Errorf("short fin header not zero-padded: %x", b[:16])
	}
	if b = r.AppendLegacy(nil, fin); !bytes.Equal(b[:12], fin[:12]) || len(b) != 52 {
		t.Errorf("legacy head %x len %d", b[:12], len(b))
	}
}

func TestReportNegativeDurations(t *testing.T) {
	r := ServerReport{Stop: -time.Second, Jitter: -time.Millisecond,
		Transit: TransitStats{Min: -1500 * time.Millisecond}}
	b := r.AppendModern(nil, nil)
	if got := hex.EncodeToString(b[28:36]) + hex.EncodeToString(b[48:56]); got != "00000000000000000000000000000000" {
		t.Errorf("negative stop/jitter written as %s", got)
	}
	if got := hex.EncodeToString(b[56:64]); got != "fffffffffff85ee0" { // -1 s, -500000 µs
		t.Errorf("min transit = %s", got)
	}
	p, _, _ := ParseServerReport(b)
	if p.Transit.Min != -1500*time.Millisecond {
		t.Errorf("min transit parsed as %v", p.Transit.Min)
	}
}

func TestParseServerReportErrors(t *testing.T) {
	mod := capReportModern
	tests := []struct {
		name      string
		b         []byte
		wantShort bool
		wantNot   bool
	}{
		{"empty", nil, true, false},
		{"51 bytes", mustHex(legacyGolden)[:51], true, false},
		{"zeros 128", make([]byte, 128), false, true},
		{"client datagram", capUDPClientFirst, false, true},
		{"seq64 truncated", mod[:127], true, false},
		{"seq64 at 56", mod[:56], true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseServerReport(tt.b)
			if errors.Is(err, ErrShort) != tt.wantShort || errors.Is(err, ErrNotReport) != tt.wantNot {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func TestIsEcho(t *testing.T) {
	modernHdr := capFIN2[16:76]
	mod := EchoCheck{Layout: LayoutModern, Header: modernHdr, FirstFIN: -11, LastFIN: -12}
	// Our legacy client: header flags 0 at 12, FIN −51 repeated.
	legacyFIN := mustHex("ffffffcd6b0cb2220006f5dc" + "00000000000000010000138a000000c8" + "00000000ffffff38")
	leg := EchoCheck{Layout: LayoutLegacy, Header: legacyFIN[12:], FirstFIN: -51, LastFIN: -51}
	noHdr := mod
	noHdr.Header = nil
	rFIN := append([]byte(nil), capFIN2...)
	copy(rFIN[16:], mustHex("c8010098")) // -r: VERSION1 in our own header
	rCheck := EchoCheck{Layout: LayoutModern, Header: rFIN[16:76], FirstFIN: -11, LastFIN: -12}
	tests := []struct {
		name string
		c    EchoCheck
		b    []byte
		want bool
	}{
		{"2.1.8 echo of FIN", mod, capReportEcho, true},
		{"2.1.8 real report", mod, capReportModern, false},
		{"echo, header only", noHdr, capReportEcho, true},
		{"real report, header only", noHdr, capReportModern, false},
		{"echo of -r FIN (VERSION1 at 16)", rCheck, rFIN, true},
		{"echo of a data datagram", mod, capUDPClientFirst, false}, // other header (port/len differ): not ours
		{"FIN id outside range", noHdr, mustHex(capUDPClientFINs[0] + "48010098"), false},
		{"2.0.5 report echoing our FIN id", leg, mustHex(legacyGolden), false},
		{"legacy echo of our FIN", leg, legacyFIN, true},
		{"zperf-new report echoing 16 bytes", mod,
			(&legacyReport).AppendModern(nil, capFIN2[:16])[:56], false},
		{"empty", mod, nil, false},
		{"nothing to compare", EchoCheck{}, capReportEcho, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.IsEcho(tt.b); got != tt.want {
				t.Errorf("IsEcho = %v, want %v", got, tt.want)
			}
		})
	}
	// Why IsEcho matters: the echo's id2 (FFFFFFFF at 12) has the VERSION1 bit, so it parses as a legacy report.
	if _, l, err := ParseServerReport(capReportEcho); err != nil || l != LayoutLegacy {
		t.Errorf("echo parsed as %v, %v; the IsEcho check is the only guard", l, err)
	}
}

// TestCapturedReportToLegacyClient: a 2.1.8 server answers even a 12-byte-header client at offset 16, so a
// legacy client that reads at 12 gets garbage, while ParseServerReport detects the modern layout.
func TestCapturedReportToLegacyClient(t *testing.T) {
	r, l, err := ParseServerReport(capReportToLegacy)
	if err != nil || l != LayoutModern {
		t.Fatalf("layout %v err %v", l, err)
	}
	if r.Datagrams != 20 || r.TotalBytes != 4000 || r.Errors != 0 || r.OutOfOrder != 0 ||
		r.Stop != 106601*time.Microsecond || r.Jitter != 8*time.Microsecond {
		t.Errorf("report %+v", r)
	}
}
