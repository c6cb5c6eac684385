package probe

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// TestChoose: each opening verdict maps to the dialect auto picks, and the
// answers that tell nothing fall back to iperf2 saying so.
func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    OpeningKind
		res     result.Probe
		dialect string
		decided bool
		reason  string
	}{
		{"iperf3", OpeningIperf3, result.Probe{Iperf3: result.ProbeIperf3{TestCompleted: true}}, ChoiceIperf3, true, "the peer answered as an iperf3 server"},
		{"iperf3 test failed", OpeningIperf3, result.Probe{Iperf3: result.ProbeIperf3{Error: "timeout"}}, ChoiceIperf3, true, "did not complete: timeout"},
		{"iperf3 busy", OpeningIperf3Busy, result.Probe{}, ChoiceIperf3, true, "busy"},
		{"wirebench", OpeningIperf3, result.Probe{Wirebench: result.ProbeWirebench{Iperf3Ext: true}}, ChoiceIperf2, true, "wirebench server"},
		{"iperf 2.1.8", OpeningIperf2Ack, result.Probe{Iperf2: result.ProbeIperf2{Version: "2.1.8"}}, ChoiceIperf2, true, "acked as iperf 2.1.8"},
		{"refused", OpeningRefused, result.Probe{}, ChoiceIperf2, false, "TCP was refused"},
		{"silent", OpeningSilent, result.Probe{}, ChoiceIperf2, false, "said nothing"},
		{"closed", OpeningClosed, result.Probe{}, ChoiceIperf2, false, "closed the connection"},
		{"other", OpeningOther, result.Probe{}, ChoiceIperf2, false, "no known dialect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Choose(tc.kind, &tc.res)
			if c.Dialect != tc.dialect || c.Decided != tc.decided || !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("got %s %v %q, want %s %v containing %q", c.Dialect, c.Decided, c.Reason, tc.dialect, tc.decided, tc.reason)
			}
			if !c.Decided && !strings.Contains(c.Reason, "cannot tell the dialect, using iperf2") {
				t.Errorf("fallback reason %q does not say it fell back", c.Reason)
			}
		})
	}
}
