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
