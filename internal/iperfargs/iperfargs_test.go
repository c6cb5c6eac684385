package iperfargs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRewrite(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"-s"}, []string{"server"}},
		{[]string{"-s", "-u", "-i", "1"}, []string{"server", "-u", "-i", "1"}},
		{[]string{"-su"}, []string{"server", "-u"}},
		{[]string{"-c", "10.0.0.1", "-u", "-b", "100M"}, []string{"client", "10.0.0.1", "-u", "-b", "100M"}},
		{[]string{"-u", "-c", "h", "-t", "60"}, []string{"client", "h", "-u", "-t", "60"}},
		{[]string{"-c10.0.0.1", "-u"}, []string{"client", "10.0.0.1", "-u"}},
		{[]string{"-uR", "-c10.0.0.1", "-b100M"}, []string{"client", "10.0.0.1", "-uR", "-b100M"}},
		{[]string{"-uc", "h"}, []string{"client", "h", "-u"}},
		{[]string{"-uc10.0.0.1"}, []string{"client", "10.0.0.1", "-u"}},
		{[]string{"--client", "h", "-u"}, []string{"client", "h", "-u"}},
		{[]string{"--client=h"}, []string{"client", "h"}},
		{[]string{"--server", "-p", "5002"}, []string{"server", "-p", "5002"}},
		{[]string{"client", "h", "-c", "x"}, []string{"client", "h", "-c", "x"}},
		{[]string{"calc", "--medium", "eth100"}, []string{"calc", "--medium", "eth100"}},
		{[]string{"--help"}, []string{"--help"}},
		// iperf's -v is the version, alone or after -s / -c HOST.
		{[]string{"-v"}, []string{"version"}},
		{[]string{"--version"}, []string{"version"}},
		{[]string{"-s", "-v"}, []string{"version"}},
		{[]string{"-c", "h", "-u", "-v"}, []string{"version"}},
		{[]string{"-c", "h", "--", "-v"}, []string{"client", "h", "--", "-v"}},
		{[]string{"client", "h", "-v"}, []string{"client", "h", "-v"}},
		// -V (iperf 2's IPv6) is not the version.
		{[]string{"-s", "-V"}, []string{"server", "-V"}},
		{nil, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, " "), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Rewrite(tt.in)); diff != "" {
				t.Errorf("rewrite(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestJoinOptional(t *testing.T) {
	opt := map[string][]string{"--latency": {"udp", "icmp"}}
	tests := []struct{ in, want []string }{
		{[]string{"h", "--latency", "icmp"}, []string{"h", "--latency=icmp"}},
		{[]string{"--latency", "h"}, []string{"--latency", "h"}},
		{[]string{"--latency"}, []string{"--latency"}},
		{[]string{"--", "--latency", "udp"}, []string{"--", "--latency", "udp"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, JoinOptional(tt.in, opt)); diff != "" {
			t.Errorf("JoinOptional(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
