package iperf2

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestWBExtension: a wirebench server's report carries its duplicate count
// and diagnosis after the 128-byte modern report, within 512 bytes (what an
// iperf 2.1.8 client's receive buffer always holds); the report itself
// parses as before, and a plain 128-byte report carries no extension.
func TestWBExtension(t *testing.T) {
	r := ServerReport{TotalBytes: 1470 * 100, Datagrams: 101, Errors: 2, OutOfOrder: 1}
	plain := r.AppendModern(nil, nil)
	if got, _, err := ParseServerReport(plain); err != nil || got.WB != nil {
		t.Fatalf("plain report: %+v, %v: want no extension", got.WB, err)
	}
	long := strings.Repeat("ü", 400) // cut to fit, on a rune boundary
	for _, e := range []WBExtension{
		{Duplicates: 17, HasDuplicates: true},
		{Duplicates: 0, HasDuplicates: true, Diagnosis: "timer-bound arrivals"},
		{HasDuplicates: false},
		{Duplicates: 3, HasDuplicates: true, Diagnosis: long},
	} {
		b := AppendWBExtension(r.AppendModern(nil, nil), e, 1470)
		if len(b) > MaxReportLenWithExt {
			t.Errorf("%d bytes: over %d", len(b), MaxReportLenWithExt)
		}
		got, l, err := ParseServerReport(b)
		if err != nil || l != LayoutModern || got.Datagrams != 101 || got.Errors != 2 || got.WB == nil {
			t.Fatalf("parse: %+v %v %v", got, l, err)
		}
		want := e
		if len(want.Diagnosis) > len(got.WB.Diagnosis) {
			if !strings.HasPrefix(want.Diagnosis, got.WB.Diagnosis) || len(got.WB.Diagnosis) < 300 {
				t.Errorf("diagnosis cut to %d bytes, not a prefix of the long one", len(got.WB.Diagnosis))
			}
			want.Diagnosis = got.WB.Diagnosis
		}
		if *got.WB != want {
			t.Errorf("extension %+v, want %+v", *got.WB, want)
		}
	}
	// The reply never outgrows the client's own datagrams: cut to fit,
	// or left out when not even the counts fit.
	if b := AppendWBExtension(r.AppendModern(nil, nil), WBExtension{HasDuplicates: true, Diagnosis: long}, 200); len(b) != 200 {
		t.Errorf("limit 200: %d bytes", len(b))
	}
	if b := AppendWBExtension(r.AppendModern(nil, nil), WBExtension{HasDuplicates: true}, 140); len(b) != ReportLenModern {
		t.Errorf("limit 140: %d bytes, want the plain report", len(b))
	}
	// A reply that only looks like it (wrong magic, bad length) carries none.
	b := AppendWBExtension(r.AppendModern(nil, nil), WBExtension{Duplicates: 1, HasDuplicates: true}, 1470)
	b[ReportLenModern] = 'x'
	if got, _, _ := ParseServerReport(b); got.WB != nil {
		t.Errorf("wrong magic parsed as %+v", *got.WB)
	}
	b = AppendWBExtension(r.AppendModern(nil, nil), WBExtension{Diagnosis: "abc"}, 1470)
	b = b[:len(b)-1]
	if got, _, _ := ParseServerReport(b); got.WB != nil {
		t.Errorf("cut extension parsed as %+v", *got.WB)
	}
}

// TestWBExtensionLatency: the transit summary round-trips, takes its room
// before the diagnosis is cut, is left out when the client's datagrams
// are too short for it, and a reply with it still parses as before by a
// client that predates it (parseWBExtensionV1, the parser as it was),
// while a reply without it parses here with HasLatency false.
func TestWBExtensionLatency(t *testing.T) {
	r := ServerReport{TotalBytes: 1470 * 100, Datagrams: 101}
	lat := WBLatency{MinUS: -2_999_950, P50US: -2_999_900, P90US: -2_999_800, P99US: -2_999_000, P999US: -2_998_000, MaxUS: 12, Count: 101}
	long := strings.Repeat("x", 400)
	for _, e := range []WBExtension{
		{Duplicates: 2, HasDuplicates: true, Latency: lat, HasLatency: true},
		{HasDuplicates: true, Diagnosis: "timer-bound arrivals", Latency: lat, HasLatency: true},
		{HasDuplicates: true, Diagnosis: long, Latency: lat, HasLatency: true},
	} {
		b := AppendWBExtension(r.AppendModern(nil, nil), e, 1470)
		if len(b) > MaxReportLenWithExt {
			t.Errorf("%d bytes: over %d", len(b), MaxReportLenWithExt)
		}
		got, _, err := ParseServerReport(b)
		if err != nil || got.WB == nil || !got.WB.HasLatency || got.WB.Latency != lat {
			t.Fatalf("parse: %+v %v", got.WB, err)
		}
		if got.WB.Duplicates != e.Duplicates || !strings.HasPrefix(e.Diagnosis, got.WB.Diagnosis) {
			t.Errorf("counts or diagnosis changed: %+v", *got.WB)
		}
		old, ok := parseWBExtensionV1(b)
		if !ok || old.duplicates != e.Duplicates || old.diagnosis != got.WB.Diagnosis {
			t.Errorf("an older client reads %+v %v, want duplicates %d diagnosis %q", old, ok, e.Duplicates, got.WB.Diagnosis)
		}
	}
	// Too short a client datagram for the summary: left out, the counts
	// kept; from MinDatagramForLatency on it fits.
	if b := AppendWBExtension(r.AppendModern(nil, nil), WBExtension{HasLatency: true}, MinDatagramForLatency); len(b) != MinDatagramForLatency {
		t.Errorf("limit %d: %d bytes, want the summary to just fit", MinDatagramForLatency, len(b))
	}
	b := AppendWBExtension(r.AppendModern(nil, nil), WBExtension{HasDuplicates: true, Latency: lat, HasLatency: true}, MinDatagramForLatency-1)
	if got, _, err := ParseServerReport(b); err != nil || got.WB == nil || got.WB.HasLatency || !got.WB.HasDuplicates {
		t.Errorf("limit %d: %+v %v, want duplicates without latency", MinDatagramForLatency-1, got.WB, err)
	}
	// A flag without the room for the summary: the rest still parses.
	b = AppendWBExtension(r.AppendModern(nil, nil), WBExtension{HasDuplicates: true, Latency: lat, HasLatency: true}, 1470)
	b[ReportLenModern+5] -= wbExtLatencyLen // length field no longer covers it
	if got, _, err := ParseServerReport(b[:len(b)-wbExtLatencyLen]); err != nil || got.WB == nil || got.WB.HasLatency {
		t.Errorf("flag without room: %+v %v", got.WB, err)
	}
}

// parseWBExtensionV1 is the extension parser of wirebench before the
// transit summary, kept to prove that older clients still read the reply.
func parseWBExtensionV1(b []byte) (struct {
	duplicates uint64
	diagnosis  string
}, bool) {
	var e struct {
		duplicates uint64
		diagnosis  string
	}
	if len(b) < ReportLenModern+18 {
		return e, false
	}
	x := b[ReportLenModern:]
	n := int(binary.BigEndian.Uint16(x[4:]))
	if string(x[:4]) != "wbx1" || n < 18 || n > len(x) {
		return e, false
	}
	dl := int(binary.BigEndian.Uint16(x[16:]))
	if 18+dl > n {
		return e, false
	}
	if binary.BigEndian.Uint16(x[6:])&1 != 0 {
		e.duplicates = binary.BigEndian.Uint64(x[8:])
	}
	e.diagnosis = string(x[18 : 18+dl])
	return e, true
}
