package iperf2

import (
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
