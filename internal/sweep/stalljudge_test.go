package sweep_test

import (
	"math"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// TestSpoiled: which failing trials are this host's doing.
func TestSpoiled(t *testing.T) {
	rtt := func(min, p50, p99 float64) *result.SweepRTT {
		return &result.SweepRTT{Min: min, P50: p50, P99: p99, Max: 3 * p99}
	}
	spec := sweep.Spec{Size: 1472, RatePPS: 800}
	for _, c := range []struct {
		name string
		o    result.SweepOutcome
		want string // part of the reason; "" for none
	}{
		{"our socket dropped", result.SweepOutcome{Lost: 3, HostDrops: 3}, "our own socket dropped 3"},
		{"stall past an empty queue", result.SweepOutcome{Lost: 40, OfferedPPS: 800, MaxLagS: 0.012, RTT: rtt(1, 1.2, 6)}, "queue stood empty"},
		{"one burst holds the loss", result.SweepOutcome{Lost: 5, OfferedPPS: 800, MaxLagS: 0.012, RTT: rtt(1, 5, 6)}, "holds all 5 lost"},
		{"stall within the queue's room", result.SweepOutcome{Lost: 5, OfferedPPS: 800, MaxLagS: 0.004, RTT: rtt(1, 1.2, 6)}, ""},
		{"overload: queue full, loss beyond the burst", result.SweepOutcome{Lost: 400, OfferedPPS: 800, MaxLagS: 0.03, RTT: rtt(1, 5.8, 6)}, ""},
		{"overload: the far end timed at a tenth of our rate", result.SweepOutcome{Lost: 7000, OfferedPPS: 8000, ServicePPS: 800, MaxLagS: 0.16, RTT: rtt(1, 6, 200)}, ""},
		{"nothing lost (a backlog: sweep's rule)", result.SweepOutcome{OfferedPPS: 800, MaxLagS: 0.02, BacklogS: 0.01, RTT: rtt(1, 1.2, 6)}, ""},
		{"no round trips (a server's report)", result.SweepOutcome{Lost: 5, OfferedPPS: 800, MaxLagS: 0.03}, ""},
		// Three stalls past a 5 ms queue (p99 − p50) in a long trial at a rate that
		// kept it half full: 14 lost, one burst holds 9.6, the three 24.
		{"several bursts hold the loss", result.SweepOutcome{Lost: 14, OfferedPPS: 800, MaxLagS: 0.012, StallLagsS: []float64{0.012, 0.002, 0.009, 0.009}, RTT: rtt(1, 3, 8)}, "5.0 ms) 3 times (the deepest 12.0 ms), and their catch-up bursts (24 datagrams) hold all 14 lost"},
		{"a cut list: lower bounds, said so", result.SweepOutcome{Lost: 14, OfferedPPS: 800, MaxLagS: 0.012, StallLagsS: []float64{0.012, 0.002, 0.009, 0.009}, StallsCut: true, RTT: rtt(1, 3, 8)}, "5.0 ms) at least 3 times (the deepest 12.0 ms), and their catch-up bursts (at least 24 datagrams) hold all 14 lost"},
		{"several bursts, more lost than they hold", result.SweepOutcome{Lost: 25, OfferedPPS: 800, MaxLagS: 0.012, StallLagsS: []float64{0.012, 0.002, 0.009, 0.009}, RTT: rtt(1, 3, 8)}, ""},
		{"stalls within the queue's room do not count", result.SweepOutcome{Lost: 14, OfferedPPS: 800, MaxLagS: 0.012, StallLagsS: []float64{0.012, 0.004, 0.004, 0.004, 0.004}, RTT: rtt(1, 3, 8)}, ""},
	} {
		got := (&sweep.StallJudge{}).Spoiled(spec, c.o)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSpoiledRemembersRoom: the queue's room is the smallest deep wait of
// a trial that lost, so a later trial whose round trips this host's
// stalls held up (a deep wait of 60 ms behind a 4 ms queue) is judged
// against 4 ms.
func TestSpoiledRemembersRoom(t *testing.T) {
	j := &sweep.StallJudge{}
	spec := sweep.Spec{Size: 1472, RatePPS: 400}
	first := result.SweepOutcome{Lost: 2, OfferedPPS: 400, MaxLagS: 0.002, RTT: &result.SweepRTT{Min: 1, P50: 1.1, P99: 5.1, Max: 9}}
	if why := j.Spoiled(spec, first); why != "" || math.Abs(j.Room()-0.004) > 1e-9 {
		t.Fatalf("a 2 ms lag behind a 4 ms queue: %q (room %v)", why, j.Room())
	}
	held := result.SweepOutcome{Lost: 30, OfferedPPS: 400, MaxLagS: 0.02, RTT: &result.SweepRTT{Min: 1, P50: 1.2, P99: 61.2, Max: 80}}
	if why := j.Spoiled(spec, held); !strings.Contains(why, "that lost (4.0 ms)") {
		t.Errorf("a 20 ms lag, round trips held up to 61 ms: %q, want judged against the 4 ms seen before", why)
	}
	if why := (&sweep.StallJudge{}).Spoiled(spec, held); why != "" {
		t.Errorf("the same trial first: %q, want not spoiled (60 ms of room seen)", why)
	}
}

// TestSpoiledNotWhereTheFarEndsRateOverflows: trials of 18 B against a
// 10 Mbit/s model with a 5 ms queue (14880.95/s), as a quiet host ran
// them. At 14918/s for 2.24 s a steady sender builds 83 datagrams of
// backlog where the queue holds 74: the 13 lost are the far end's,
// although our sender's 1.1 ms lag holds them too (the judge once said a
// stall, three times, and the search ended flagged as this host's limit).
// At 14879/s, under the far end's rate, a 9.4 ms lag's burst still spoils
// the trial. Before any losing trial was timed, nothing is known of the
// far end's rate, and the lag decides as before.
func TestSpoiledNotWhereTheFarEndsRateOverflows(t *testing.T) {
	spec := sweep.Spec{Size: 18}
	over := result.SweepOutcome{Lost: 13, OfferedPPS: 14918.15, SendSeconds: 2.236, ServicePPS: 14880.950, MaxLagS: 0.0011,
		RTT: &result.SweepRTT{Min: 0.146, P50: 3.097, P99: 5.071, Max: 5.3}}
	under := result.SweepOutcome{Lost: 88, OfferedPPS: 14879.5, SendSeconds: 2.236, ServicePPS: 14880.953, MaxLagS: 0.0094,
		RTT: &result.SweepRTT{Min: 0.096, P50: 1.037, P99: 5.050, Max: 5.3}}
	// The first failure, 1 % over the far end's rate for 1 s: its queue
	// stood full (0.18 ms free above the median wait).
	first := result.SweepOutcome{Lost: 80, OfferedPPS: 15029.04, SendSeconds: 1, ServicePPS: 14880.947, MaxLagS: 0.0001,
		RTT: &result.SweepRTT{Min: 0.280, P50: 4.948, P99: 5.128, Max: 5.3}}
	j := &sweep.StallJudge{}
	if why := j.Spoiled(spec, first); why != "" {
		t.Errorf("15029/s for 1 s: %q, want the far end's loss", why)
	}
	if why := j.Spoiled(spec, under); why == "" {
		t.Error("a 9.4 ms lag under the far end's rate: not judged a stall")
	}
	if why := j.Spoiled(spec, over); why != "" {
		t.Errorf("14918/s for 2.24 s past a 14881/s far end with a 5 ms queue: %q, want the far end's loss", why)
	}
	// A trial short enough to fit its excess in the queue is judged by
	// the lag.
	short := over
	short.SendSeconds = 1
	if why := j.Spoiled(spec, short); why == "" {
		t.Error("14918/s for 1 s (37 datagrams of excess in a 74-datagram queue), a 1.1 ms lag: not judged a stall")
	}
}
