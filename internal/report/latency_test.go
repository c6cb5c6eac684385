package report

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wirebench/wirebench/internal/result"
)

func rttStats(loss float64, p50 float64) result.RTTStats {
	return result.RTTStats{Seconds: 1, Sent: 100, Received: 99, Timeouts: 1, LossPct: loss, RequestsPerSecond: 99,
		RTT: result.RTTSummary{Count: 99, Min: 0.1, Mean: p50 + 0.01, StdDev: 0.02, Max: 2.5, P50: p50, P90: p50 + 0.1, P99: 1.5, P999: 2.5}}
}

// TestWriteLatency pins the text of a request/response test: the
// connect probe's name, a back-to-back interval and the warnings.
func TestWriteLatency(t *testing.T) {
	r := &result.Latency{Test: result.LatencyTest{Proto: result.ProbeConnect, Peer: "127.0.0.1:5001", Size: 64},
		RTTStats: rttStats(1, 0.25), Warnings: []string{"w1"}}
	var b bytes.Buffer
	if err := WriteLatency(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "latency: tcp connect to 127.0.0.1:5001, 64-byte messages, interval 0 (back to back)\n" +
		"  sent 100, answered 99, timeouts 1, late 0, errors 0, loss 1.00 %; 99 answered/s over 1.000 s\n" +
		"  rtt      count    loss       min       p50       p90       p99     p99.9       max      mean    stddev  (ms)\n" +
		"              99             0.100     0.250     0.350     1.500     2.500     2.500     0.260     0.020\n" +
		"warning: w1\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("text (-want +got):\n%s", d)
	}
}

// TestWriteUnderLoad pins the text of a probe beside a load: the ICMP
// socket kind, both rows, the median's change; the summary line has
// both medians and is empty when a phase had no reply.
func TestWriteUnderLoad(t *testing.T) {
	lat := &result.UnderLoad{Probe: result.LatencyProbe{Proto: result.ProbeICMP, Peer: "198.18.0.2", Socket: "dgram", Size: 56, Interval: 0.01},
		Idle: rttStats(0, 0.2), Loaded: rttStats(1, 3.2), Warnings: []string{"w2"}}
	var b bytes.Buffer
	if err := WriteUnderLoad(&b, lat); err != nil {
		t.Fatal(err)
	}
	want := "latency: icmp probe to 198.18.0.2 every 10ms, 56-byte payloads (dgram socket)\n" +
		"           count    loss       min       p50       p90       p99     p99.9       max      mean    stddev  (ms)\n" +
		"idle          99   0.00%     0.100     0.200     0.300     1.500     2.500     2.500     0.210     0.020\n" +
		"loaded        99   1.00%     0.100     3.200     3.300     1.500     2.500     2.500     3.210     0.020\n" +
		"under load the median RTT changed by +3.000 ms (0.200 → 3.200 ms)\n" +
		"warning: w2\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("text (-want +got):\n%s", d)
	}
	if got, want := UnderLoadSummary(lat), ", rtt p50 0.200 ms idle, 3.200 ms loaded"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	lat.Loaded = result.RTTStats{}
	if got := UnderLoadSummary(lat); got != "" {
		t.Errorf("summary with no loaded reply %q, want none", got)
	}
}
