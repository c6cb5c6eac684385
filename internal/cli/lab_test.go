package cli

import (
	"strings"
	"testing"
)

// TestLabUsageErrors: every malformed `lab` command line gets one error
// line and exit code 2, before anything is created (so no root is needed).
func TestLabUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"lab"}, "choose up, down, status or exec"},
		{[]string{"lab", "sideways"}, "expected a subcommand"},
		{[]string{"lab", "up", "--net", "10.0.0.0/24"}, "must lie inside the benchmarking block 198.18.0.0/15"},
		{[]string{"lab", "up", "--net", "198.20.0.0/24"}, "must lie inside"},
		{[]string{"lab", "up", "--net", "198.16.0.0/14"}, "must lie inside"},
		{[]string{"lab", "up", "--net", "198.18.0.5/24"}, "host bits set, did you mean 198.18.0.0/24"},
		{[]string{"lab", "up", "--net", "198.18.0.0/31"}, "too small"},
		{[]string{"lab", "up", "--net", "2001:2::/64"}, "want an IPv4 network"},
		{[]string{"lab", "up", "--net", "lab"}, "invalid --net"},
		{[]string{"lab", "up", "--name", "Bad-Name"}, "invalid --name"},
		{[]string{"lab", "up", "--name", ""}, "invalid --name"},
		{[]string{"lab", "up", "--name", "seventeen_chars_x"}, "invalid --name"},
		{[]string{"lab", "up", "--medium", "eth7"}, "medium"},
		{[]string{"lab", "up", "--medium", "usb2-ecm"}, "Ethernet wires only"},
		{[]string{"lab", "up", "--medium", "eth100", "--rate", "100mbit"}, "choose one of --medium and --rate"},
		{[]string{"lab", "up", "--rate", "fast"}, "invalid --rate"},
		{[]string{"lab", "up", "--rate", "8000pps"}, "invalid --rate"},
		{[]string{"lab", "up", "--mtu", "40"}, "mtu 40"},
		{[]string{"lab", "up", "--burst", "4000"}, "--burst needs --medium or --rate"},
		{[]string{"lab", "up", "--medium", "eth100", "--burst", "1537"}, "burst 1537: smaller than one full frame (1538 bytes)"},
		{[]string{"lab", "up", "--model", "loss=2"}, "invalid --model"},
		{[]string{"lab", "up", "--model", "tick=7"}, "invalid --model"},
		{[]string{"lab", "up", "--model", "buffer=-1"}, "invalid --model"},
		{[]string{"lab", "up", "--model", "colour=blue"}, "invalid --model"},
		{[]string{"lab", "up", "--model-port", "5001"}, "need --model"},
		{[]string{"lab", "up", "--model-both"}, "need --model"},
		{[]string{"lab", "up", "--model", "loss=1%", "--model-port", "0"}, "invalid --model-port 0"},
		{[]string{"lab", "up", "--model", "loss=1%", "--model-port", "5001,5001"}, "given twice"},
		{[]string{"lab", "up", "--model", "loss=1%", "--model-port", "x"}, "model-port"},
		{[]string{"lab", "up", "--medium", "eth100", "--wire", "fast"}, "invalid --wire"},
		{[]string{"lab", "up", "--wire", "exact"}, "--wire exact needs --medium or --rate"},
		{[]string{"lab", "up", "--medium", "eth100", "--wire", "exact", "--burst", "3000"}, "the exact wire has none"},
		{[]string{"lab", "up", "--medium", "eth100", "--wire", "exact", "--model", "loss=1%"}, "choose one"},
		{[]string{"lab", "up", "extra"}, "expected no arguments"},
		{[]string{"lab", "down", "--name", "x-y"}, "invalid --name"},
		{[]string{"lab", "status", "--yaml"}, "unknown flag"},
		{[]string{"lab", "exec", "c", "--", "true"}, `unknown host "c"`},
		{[]string{"lab", "exec", "a"}, "expected a host (a or b) and a command"},
		{[]string{"lab", "exec", "a", "--"}, "expected a host (a or b) and a command"},
		{[]string{"lab", "exec"}, "expected a host"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) { wantUsageError(t, tt.args, tt.want) })
	}
}
