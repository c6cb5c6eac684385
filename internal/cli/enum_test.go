package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/units"
)

// TestEnumFlagsInvalid: every flag whose value comes from a fixed set,
// given a value outside it, is a usage error (exit code 2) before
// anything is measured or printed, naming the flag and listing the values
// it takes.
func TestEnumFlagsInvalid(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	// 127.0.0.1 port 9 (discard): nothing is sent, the flag is refused first.
	host := []string{"127.0.0.1", "-p", "9"}
	list := func(v ...string) string { return "want one of " + strings.Join(v, ", ") }
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"history", "--kind", "sweeps", "--db", db}, `invalid --kind "sweeps": ` + list(historyKinds...)},
		{append([]string{"sweep", "--mode", "tcp"}, host...), `invalid --mode "tcp": ` + list(sweep.Modes...)},
		{append([]string{"matrix", "--proto", "sctp"}, host...), `invalid --proto "sctp": ` + list("tcp", "udp", "both")},
		{append([]string{"matrix", "--latency=tcp"}, host...), `invalid --latency "tcp": ` + list("udp", "icmp")},
		{append([]string{"matrix", "--dialect", "iperf9"}, host...), `invalid --dialect "iperf9": ` + list(dialect.Names()...)},
		{append([]string{"client", "--dialect", "iperf9"}, host...), `invalid --dialect "iperf9": ` + list(dialect.Names()...)},
		{append([]string{"client", "-f", "x"}, host...), `invalid -f "x": ` + list(strings.Split(units.Formats, "")...)},
		{append([]string{"client", "--dut-shell", "vxworks"}, host...), `invalid --dut-shell "vxworks": ` + list(dut.Shells()...)},
		{append([]string{"client", "--dut", "cmd:true", "--dut-shell", "vxworks"}, host...), `invalid --dut-shell "vxworks": ` + list(dut.Shells()...)},
		{append([]string{"matrix", "--dut-shell", "vxworks"}, host...), `invalid --dut-shell "vxworks": `},
		{append([]string{"sweep", "--dut-shell", "vxworks"}, host...), `invalid --dut-shell "vxworks": `},
		{[]string{"server", "-p", "0", "--dut-shell", "vxworks"}, `invalid --dut-shell "vxworks": `},
		{append([]string{"client", "--rsa-padding", "none"}, host...), `invalid --rsa-padding "none": ` + list("pkcs1", "oaep")},
		{append([]string{"latency", "--proto", "sctp"}, host...), `invalid --proto "sctp": ` + list("udp", "tcp", "connect")},
		{[]string{"ping", "127.0.0.1", "--socket", "dgram"}, `invalid --socket "dgram": ` + list("auto", "raw", "unprivileged")},
		{[]string{"calc", "--medium", "eth1g", "--proto", "sctp"}, `invalid --proto "sctp": ` + list("udp", "tcp", "icmp", "raw")},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:3], " "), func(t *testing.T) { wantUsageError(t, tt.args, tt.want) })
	}
}
