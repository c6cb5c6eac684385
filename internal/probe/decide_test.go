package probe

import (
	"time"

	"testing"

	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// ack218 is the CLIENTHDRACK iperf 2.1.8 sent to the opening cookie (captured
// on loopback).
var ack218 = []byte{
	0, 0, 0, 2, 0, 0, 0, 0x1c, 0, 0, 0, 0, 0, 2, 0, 1, 0, 8, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0,
}

func TestClassifyOpening(t *testing.T) {
	ack22 := append([]byte(nil), ack218...)
	ack22[15], ack22[17], ack22[19] = 2, 1, 1 // 2.2.1-rc
	tests := []struct {
		name    string
		reply   []byte
		ended   bool
		want    OpeningKind
		version string
	}{
		{"closed", nil, true, OpeningClosed, ""},
		{"silent", nil, false, OpeningSilent, ""},
		{"iperf3 param exchange", []byte{9}, false, OpeningIperf3, ""},
		{"iperf3 busy", []byte{0xFF}, true, OpeningIperf3Busy, ""},
		{"iperf 2.1.8 ack", ack218, false, OpeningIperf2Ack, "2.1.8"},
		{"iperf 2.2.1-rc ack", ack22, false, OpeningIperf2Ack, "2.2.1-rc"},
		{"ack cut short", ack218[:12], true, OpeningOther, ""},
		{"iperf3 state then more", []byte{9, 0}, false, OpeningOther, ""},
		{"garbage", []byte("HTTP/1.1 400"), true, OpeningOther, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ver := ClassifyOpening(tc.reply, tc.ended)
			if got != tc.want || ver != tc.version {
				t.Errorf("ClassifyOpening = %q, %q; want %q, %q", got, ver, tc.want, tc.version)
			}
		})
	}
}

func TestOpeningNeedsMore(t *testing.T) {
	tests := []struct {
		name  string
		reply []byte
		want  bool
	}{
		{"nothing yet", nil, true},
		{"iperf3 state", []byte{9}, false},
		{"start of an ack", ack218[:5], true},
		{"ack header, body missing", ack218[:20], true},
		{"whole ack", ack218, false},
		{"zeros that are no ack", make([]byte, 12), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := OpeningNeedsMore(tc.reply); got != tc.want {
				t.Errorf("OpeningNeedsMore(% x) = %v, want %v", tc.reply, got, tc.want)
			}
		})
	}
}

// TestOpeningCookie checks the first word's iperf2 bits that make the cookie
// safe: not a header to iperf 2.1, but V2PEERDETECT, and still an iperf3
// cookie.
func TestOpeningCookie(t *testing.T) {
	ck, err := iperf3.NewCookie(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := OpeningCookie(ck).AppendWire(nil)
	if _, err := iperf3.ParseCookie(w); err != nil {
		t.Fatalf("not an iperf3 cookie: %v", err)
	}
	flags := uint32(w[0])<<24 | uint32(w[1])<<16 | uint32(w[2])<<8 | uint32(w[3])
	if iperf2.ClientHeaderLen(flags, false) != 0 {
		t.Errorf("flags %08x make iperf 2.1 read a header", flags)
	}
	if !iperf2.NeedsClientHdrAck(flags) {
		t.Errorf("flags %08x do not ask iperf 2.1 for a CLIENTHDRACK", flags)
	}
	if flags&iperf2.FlagVersion1 != 0 {
		t.Errorf("flags %08x have VERSION1 (lwiperf/2.0.5 would connect back)", flags)
	}
}

func TestClassifyUDPReplies(t *testing.T) {
	h := iperf2.NewClientHeader(true, 1, 5001)
	hdr := h.AppendUDPTo(nil)
	fin := make([]byte, 128)
	copy(fin[16:], hdr)
	iperf2.PutDatagram(fin, iperf2.LayoutModern, -6, time.Unix(1700000000, 0))
	ec := iperf2.EchoCheck{Layout: iperf2.LayoutModern, Header: hdr, FirstFIN: -6, LastFIN: -8}

	rep := iperf2.ServerReport{TotalBytes: 768, Datagrams: 6}
	modern := rep.AppendModern(nil, nil)
	legacy := rep.AppendLegacy(nil, fin)
	tests := []struct {
		name    string
		replies [][]byte
		layout  iperf2.Layout
		report  bool
		echoes  int
		garbage int
	}{
		{"none", nil, iperf2.LayoutModern, false, 0, 0},
		{"2.1.8 report", [][]byte{modern}, iperf2.LayoutModern, true, 0, 0},
		{"2.0.5 report", [][]byte{legacy}, iperf2.LayoutLegacy, true, 0, 0},
		{"echo of our FIN first (2.1.8 quirk)", [][]byte{fin, modern}, iperf2.LayoutModern, true, 1, 0},
		{"only echoes", [][]byte{fin, fin}, iperf2.LayoutModern, false, 2, 0},
		{"garbage", [][]byte{[]byte("hello")}, iperf2.LayoutModern, false, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := ClassifyUDPReplies(tc.replies, ec)
			if (v.Report != nil) != tc.report || v.Echoes != tc.echoes || v.Garbage != tc.garbage {
				t.Fatalf("got report=%v echoes=%d garbage=%d", v.Report != nil, v.Echoes, v.Garbage)
			}
			if v.Report == nil {
				return
			}
			if v.Layout != tc.layout || v.Report.TotalBytes != 768 || v.Report.Datagrams != 6 {
				t.Errorf("got layout %v, %d bytes, %d datagrams", v.Layout, v.Report.TotalBytes, v.Report.Datagrams)
			}
		})
	}
}

func TestEchoReplyOK(t *testing.T) {
	reply := echo.Append(nil, echo.Message{Kind: echo.KindReply, Len: echo.HeaderLen, ID: 42})
	request := echo.Append(nil, echo.Message{Kind: echo.KindRequest, Len: echo.HeaderLen, ID: 42})
	tests := []struct {
		name string
		b    []byte
		id   uint64
		want bool
	}{
		{"reply", reply, 42, true},
		{"other id", reply, 43, false},
		{"request bounced", request, 42, false},
		{"short", reply[:10], 42, false},
		{"iperf2 ack", ack218, 42, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := EchoReplyOK(tc.b, tc.id); got != tc.want {
				t.Errorf("EchoReplyOK = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name     string
		r        result.Probe
		dialects []string
		answered bool
	}{
		{"nothing", result.Probe{}, nil, false},
		{"iperf 2.1.8", result.Probe{Iperf2: result.ProbeIperf2{TCP: true, Version: "2.1.8", UDP: true, UDPLayout: "modern"}},
			[]string{result.ProbeDialectIperf2TCP, result.ProbeDialectIperf2UDP}, true},
		{"lwiperf", result.Probe{TCP: result.ProbeTCPPort{Open: true}, Iperf2: result.ProbeIperf2{TCPNoAck: true}}, []string{result.ProbeDialectTCPSink}, true},
		{"legacy UDP", result.Probe{Iperf2: result.ProbeIperf2{UDP: true, UDPLayout: "legacy"}}, []string{result.ProbeDialectIperf2UDPOld}, true},
		{"iperf3", result.Probe{TCP: result.ProbeTCPPort{Open: true}, Iperf3: result.ProbeIperf3{Answered: true}}, []string{result.ProbeDialectIperf3}, true},
		{"wirebench", result.Probe{Wirebench: result.ProbeWirebench{EchoTCP: true}, Iperf2: result.ProbeIperf2{TCP: true, TCPNoAck: true}},
			[]string{result.ProbeDialectWirebench, result.ProbeDialectIperf2TCP}, true},
		{"open port, no dialect", result.Probe{TCP: result.ProbeTCPPort{Open: true}}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			r.Host, r.Port = "127.0.0.1", 5001
			Summarize(&r)
			if r.Answered != tc.answered || len(r.Dialects) != len(tc.dialects) {
				t.Fatalf("answered %v dialects %v; want %v %v", r.Answered, r.Dialects, tc.answered, tc.dialects)
			}
			for i := range tc.dialects {
				if r.Dialects[i] != tc.dialects[i] {
					t.Errorf("dialects %v, want %v", r.Dialects, tc.dialects)
				}
			}
			if r.Summary == "" {
				t.Error("empty summary")
			}
		})
	}
}
