package probe

import (
	"testing"

	"github.com/wirebench/wirebench/internal/session"
)

// TestWillProbeIperfPorts: with no --dialect, iperf's own ports say the
// dialect (5001 iperf2, 5201 iperf3) and nothing is probed; any other port,
// or --dialect auto on any port, probes; --dialect NAME never does.
func TestWillProbeIperfPorts(t *testing.T) {
	for _, tc := range []struct {
		port  int
		value string
		given bool
		want  bool
	}{
		{session.DefaultPort, "", false, false},
		{session.DefaultIperf3Port, "", false, false},
		{5202, "", false, true},
		{session.DefaultPort, DialectAuto, true, true},
		{session.DefaultIperf3Port, DialectAuto, true, true},
		{5202, session.DialectIperf2, true, false},
	} {
		if got := WillProbe(tc.port, tc.value, tc.given); got != tc.want {
			t.Errorf("WillProbe(%d, %q, given %v) = %v, want %v", tc.port, tc.value, tc.given, got, tc.want)
		}
	}
}
