package session

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// TestApplyOmit: the omitted intervals' counts and seconds come off the
// figures counted here, per flow and per stream; a peer's report is kept
// whole, with a warning unless the peer omits itself.
func TestApplyOmit(t *testing.T) {
	r := &result.Result{
		Test: result.Test{Protocol: result.UDP},
		Intervals: []result.Interval{
			{Start: 0, End: 1, Bytes: 100, Packets: 10, Flow: "forward", Omitted: true},
			{Start: 0, End: 1, Bytes: 50, Packets: 5, Lost: 1, Flow: "reverse", Omitted: true},
			{Start: 1, End: 3, Bytes: 300, Packets: 30, Flow: "forward"},
			{Start: 1, End: 3, Bytes: 150, Packets: 15, Lost: 2, Flow: "reverse"},
		},
		Sender:   &result.Sender{Bytes: 400, Packets: 40, Seconds: 3, PacketsPerSecond: 13},
		Receiver: &result.Receiver{Bytes: 390, Packets: 39, Seconds: 3, Source: "peer-report", Intervals: []result.Interval{{End: 1}, {Start: 1, End: 3}}},
		Reverse:  &result.Flow{Receiver: &result.Receiver{Bytes: 200, Packets: 20, Lost: 3, Total: 23, Seconds: 3, Source: "local"}},
		Streams:  []result.Stream{{ID: 1, Sender: &result.Sender{Bytes: 400, Packets: 40, Seconds: 3}}},
	}
	per := map[string]result.Interval{"1": {Bytes: 100, Packets: 10}}
	ApplyOmit(r, time.Second, per, false)
	if s := r.Sender; s.Bytes != 300 || s.Packets != 30 || s.Seconds != 2 || s.BitsPerSecond != 1200 || s.PacketsPerSecond != 15 {
		t.Errorf("sender %+v, want 300 bytes, 30 packets over 2 s", s)
	}
	if rr := r.Receiver; rr.Bytes != 390 || rr.Seconds != 3 || !rr.Intervals[0].Omitted || rr.Intervals[1].Omitted {
		t.Errorf("peer's receiver %+v: want it whole, its first interval marked omitted", rr)
	}
	if rr := r.Reverse.Receiver; rr.Bytes != 150 || rr.Packets != 15 || rr.Lost != 2 || rr.Total != 17 || rr.Seconds != 2 {
		t.Errorf("reverse receiver %+v, want 150 bytes, 15 packets, 2 lost of 17 over 2 s", rr)
	}
	if s := r.Streams[0].Sender; s.Bytes != 300 || s.Seconds != 2 {
		t.Errorf("stream sender %+v, want 300 bytes over 2 s", s)
	}
	if r.Test.Omit != 1 {
		t.Errorf("test.omit_s %v, want 1", r.Test.Omit)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "peer's report covers the whole test") {
		t.Errorf("warnings %q, want one about the peer's report", r.Warnings)
	}

	// A flow that started after the period (the -r connect-back) keeps
	// everything; a peer that omits itself raises no warning.
	r2 := &result.Result{
		Intervals: []result.Interval{{Start: 0, End: 1, Bytes: 10, Omitted: true}, {Start: 1, End: 2, Bytes: 10}, {Start: 2, End: 3, Bytes: 7, Flow: "reverse"}},
		Sender:    &result.Sender{Bytes: 20, Seconds: 2},
		Receiver:  &result.Receiver{Bytes: 20, Seconds: 2, Source: "peer-report"},
		Reverse:   &result.Flow{Receiver: &result.Receiver{Bytes: 7, Seconds: 1, Source: "local"}},
	}
	ApplyOmit(r2, time.Second, nil, true)
	if r2.Sender.Bytes != 10 || r2.Sender.Seconds != 1 || r2.Reverse.Receiver.Bytes != 7 || r2.Reverse.Receiver.Seconds != 1 || len(r2.Warnings) != 0 {
		t.Errorf("sender %+v, reverse %+v, warnings %q", r2.Sender, r2.Reverse.Receiver, r2.Warnings)
	}
}
