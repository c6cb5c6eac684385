package report

import (
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

func TestLatencySummary(t *testing.T) {
	r := &result.Latency{Test: result.LatencyTest{Proto: "udp"}}
	r.Sent, r.Received = 10, 0
	if got, want := LatencySummary(r), "udp echo, 0/10 answered"; got != want {
		t.Errorf("no replies: %q, want %q", got, want)
	}
	r.Received, r.RTT.Count, r.RTT.P50 = 9, 9, 0.4321
	if got, want := LatencySummary(r), "udp echo, 9/10 answered, rtt p50 0.432 ms"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
