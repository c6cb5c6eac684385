package result

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLabels: a test's own labels come from its test description and
// role; the peer loses its port (IPv6 brackets too), empty values are
// left out, and a peer with no port is kept as it is.
func TestLabels(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Result
		want map[string]string
	}{
		{"client", Result{Role: "client", Test: Test{Protocol: UDP, Direction: DirSend, Dialect: "iperf2", Peer: "[2001:db8::1]:5001"}},
			map[string]string{"protocol": "udp", "direction": "send", "dialect": "iperf2", "peer": "2001:db8::1", "role": "client"}},
		{"server", Result{Role: "server", Test: Test{Protocol: TCP, Direction: DirReceive, Peer: "192.0.2.7:40000"}},
			map[string]string{"protocol": "tcp", "direction": "receive", "peer": "192.0.2.7", "role": "server"}},
		{"bare peer", Result{Test: Test{Peer: "dut.example"}}, map[string]string{"peer": "dut.example"}},
		{"empty", Result{}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, tc.r.Labels()); d != "" {
				t.Errorf("labels (-want +got):\n%s", d)
			}
		})
	}
}
