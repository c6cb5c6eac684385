package iperf2

import (
	"testing"
	"time"
)

// TestTCPReportRoundTrip: the report survives marshalling, alone and after
// either CLIENTHDRACK, and the reserved word carries the request.
func TestTCPReportRoundTrip(t *testing.T) {
	want := TCPReport{Bytes: 1<<40 + 60, Elapsed: 2003456 * time.Microsecond}
	rep := want.AppendTo(nil)
	if len(rep) != TCPReportSize {
		t.Fatalf("report is %d bytes, want %d", len(rep), TCPReportSize)
	}
	ack := AppendClientHdrAck(nil)
	ackTS := append(ack[:4:4], 0, 0, 0, ClientHdrAckSizeTS)
	ackTS = append(append(ackTS, ack[8:]...), make([]byte, 24)...)
	for name, b := range map[string][]byte{
		"alone":       rep,
		"after ack":   append(append([]byte{}, ack...), rep...),
		"after ack52": append(append([]byte{}, ackTS...), rep...),
	} {
		got, ok := ParseTCPReply(b)
		if !ok || got != want {
			t.Errorf("%s: got %+v ok %v, want %+v", name, got, ok, want)
		}
	}
	h := NewClientHeader(false, 1, 5001)
	h.Reserved = ReservedAskTCPReport
	b := h.AppendTo(nil)
	if b[ClientHeaderV1Len+20] != 'W' || b[ClientHeaderV1Len+21] != 'B' {
		t.Errorf("reserved word not at Ext+20: %x", b)
	}
	p, _, err := ParseClientHeader(b)
	if err != nil || p.Reserved != ReservedAskTCPReport {
		t.Errorf("parsed reserved %04x err %v", p.Reserved, err)
	}
}

// TestTCPReplyWithoutReport: what an iperf 2 server sends (nothing, or
// only its CLIENTHDRACK), a cut report and foreign bytes give no report.
func TestTCPReplyWithoutReport(t *testing.T) {
	rep := TCPReport{Bytes: 5, Elapsed: time.Second}.AppendTo(nil)
	bad := append([]byte{}, rep...)
	bad[7] = 23
	for name, b := range map[string][]byte{
		"nothing":     nil,
		"ack only":    AppendClientHdrAck(nil),
		"cut":         rep[:TCPReportSize-1],
		"ack and cut": append(AppendClientHdrAck(nil), rep[:10]...),
		"bad length":  bad,
		"digits":      []byte("012345678901234567890123456789"),
	} {
		if r, ok := ParseTCPReply(b); ok {
			t.Errorf("%s: parsed %+v", name, r)
		}
	}
}

func FuzzParseTCPReply(f *testing.F) {
	f.Add(TCPReport{Bytes: 123, Elapsed: time.Second}.AppendTo(AppendClientHdrAck(nil)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := ParseTCPReply(b)
		if !ok {
			return
		}
		if r.Bytes < 0 || r.Elapsed < 0 {
			t.Fatalf("negative report %+v", r)
		}
		again, ok := ParseTCPReply(r.AppendTo(nil))
		if !ok || again != r {
			t.Fatalf("re-marshal: %+v ok %v, want %+v", again, ok, r)
		}
	})
}
