package iperf3

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// The sums of a two-stream UDP iperf3 report (per interval and at the end)
// add the streams up without changing the first stream's own figures:
// they once shared its counters, so stream 1 showed the sum.
func TestIperf3ReportSumsLeaveStreamsAlone(t *testing.T) {
	start := time.Now()
	cl := &i3Client{
		cfg:     &session.ClientConfig{UDP: true},
		r:       &result.Result{},
		streams: []*i3ClientStream{{id: 1}, {id: 3}},
		start:   start,
		end:     start.Add(time.Second),
		perIv: []result.Interval{
			{Start: 0, End: 1, Bytes: 1000, Packets: 100, Lost: 1, Flow: "1"},
			{Start: 0, End: 1, Bytes: 500, Packets: 50, Lost: 2, Flow: "3"},
		},
		sent: &i3wire.Results{Streams: []i3wire.StreamResult{
			{ID: 1, Bytes: 1000, Packets: 101, Errors: 1, EndTime: 1},
			{ID: 3, Bytes: 500, Packets: 52, Errors: 2, EndTime: 1},
		}},
	}
	ivs := cl.reportIntervals()
	if len(ivs) != 1 || len(ivs[0].Streams) != 2 || ivs[0].Sum == nil {
		t.Fatalf("intervals %+v", ivs)
	}
	iv := ivs[0]
	if a, b := *iv.Streams[0].Packets, *iv.Streams[1].Packets; a != 100 || b != 50 {
		t.Errorf("interval stream packets %d, %d; want 100, 50", a, b)
	}
	if a, b := *iv.Streams[0].LostPackets, *iv.Streams[1].LostPackets; a != 1 || b != 2 {
		t.Errorf("interval stream lost %d, %d; want 1, 2", a, b)
	}
	if p, l := *iv.Sum.Packets, *iv.Sum.LostPackets; p != 150 || l != 3 || iv.Sum.Bytes != 1500 {
		t.Errorf("interval sum packets %d lost %d bytes %d; want 150, 3, 1500", p, l, iv.Sum.Bytes)
	}
	if got, want := *iv.Sum.LostPercent, 100*3.0/153; got != want {
		t.Errorf("interval sum lost %% = %v, want %v", got, want)
	}

	var end i3wire.ReportEnd
	cl.reportEnd(&end)
	if len(end.Streams) != 2 || end.SumReceived == nil || end.Sum == nil {
		t.Fatalf("end %+v", end)
	}
	if a, b := *end.Streams[0].UDP.Packets, *end.Streams[1].UDP.Packets; a != 101 || b != 52 {
		t.Errorf("end stream packets %d, %d; want 101, 52", a, b)
	}
	if p, l := *end.SumReceived.Packets, *end.SumReceived.LostPackets; p != 153 || l != 3 {
		t.Errorf("end sum packets %d lost %d; want 153, 3", p, l)
	}
	if got, want := *end.Sum.LostPercent, 100*3.0/153; got != want {
		t.Errorf("end sum lost %% = %v, want %v", got, want)
	}
}

func TestReportSummaryCloneSharesNothing(t *testing.T) {
	p, j := int64(5), 1.5
	s := i3wire.ReportSummary{Packets: &p, JitterMs: &j}
	c := s.Clone()
	*c.Packets, *c.JitterMs = 7, 2.5
	if *s.Packets != 5 || *s.JitterMs != 1.5 {
		t.Errorf("changing the clone changed the original: packets %d jitter %v", *s.Packets, *s.JitterMs)
	}
}
