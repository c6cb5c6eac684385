package report

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// TestJitterMethodAndGRODrops: a local UDP receiver's summary says how its
// jitter was measured, and with GRO calls its socket drop count a lower
// bound.
func TestJitterMethodAndGRODrops(t *testing.T) {
	cases := []struct {
		method  string
		want    []string
		notWant string
	}{
		{result.JitterPerDatagram, []string{"Jitter from per-datagram arrival times", " 7 datagrams dropped by this host's"}, "at least"},
		{result.JitterPerBatch, []string{"Jitter from per-batch arrival times (UDP GRO", "at least 7 datagrams dropped by this host's"}, "per-datagram arrival"},
		{"", []string{" 7 datagrams dropped"}, "Jitter from"},
	}
	for _, tc := range cases {
		r := serverReceive().r
		r.Receiver.HostDrops = 7
		r.Receiver.JitterMethod = tc.method
		var b strings.Builder
		NewText(&b, "1").Summary(r)
		out := b.String()
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("method %q: no %q in\n%s", tc.method, w, out)
			}
		}
		if strings.Contains(out, tc.notWant) {
			t.Errorf("method %q: %q in\n%s", tc.method, tc.notWant, out)
		}
	}
}

// TestTransitLine: a receiver with a transit summary gets a line with it,
// the variation above its minimum, and the caveat about clocks; one
// without gets none.
func TestTransitLine(t *testing.T) {
	r := serverReceive().r
	var b strings.Builder
	NewText(&b, "1").Summary(r)
	if strings.Contains(b.String(), "Transit") {
		t.Errorf("a transit line without a summary:\n%s", b.String())
	}
	r.Receiver.Transit = &result.Transit{Min: 20, P50: 25, P90: 30, P99: 40, P999: 50, Max: 60, Count: 9}
	b.Reset()
	NewText(&b, "1").Summary(r)
	if w := "datagrams): min 0.020 ms, one-way"; !strings.Contains(b.String(), w) {
		t.Errorf("no %q in\n%s", w, b.String())
	}
	r.Receiver.Transit = &result.Transit{Min: -1500, P50: -1200, P90: -1000, P99: -500, P999: -400, Max: -300, Count: 42}
	b.Reset()
	NewText(&b, "1").Summary(r)
	for _, w := range []string{"Transit (receive time - send stamp, 42 datagrams): the fastest arrived 1.500 ms before its send stamp",
		"above the min, ms: p50 0.300, p90 0.500, p99 1.000, p99.9 1.100, max 1.200", "only when both ends read one clock"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("no %q in\n%s", w, b.String())
		}
	}
}
