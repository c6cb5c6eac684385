package iperf3

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/session"
)

// TestIperf3DefaultSendCap: with no --max-rate given, a real iperf3 client
// that did not authenticate cannot make our server send UDP faster than
// admit.DefaultMaxSendRate (-R, --bidir, all streams together) or
// unpaced (-b 0): the test is refused with IETOTALRATE, which iperf3
// prints, and the server logs who asked for what. Before, every one of
// them ran (for up to an hour, at whatever rate was asked). A test under
// the cap runs, and an authenticated one is not capped.
func TestIperf3DefaultSendCap(t *testing.T) {
	iperf3Bin(t)
	ts := startI3Server(t, session.ServerConfig{}, Config{})
	const refused = "total required bandwidth is larger than server limit"
	for _, args := range [][]string{
		{"-u", "-R", "-b", "2G"},
		{"-u", "--bidir", "-b", "2G"},
		{"-u", "-R", "-b", "0"},
		{"-u", "-R", "-P", "4", "-b", "300M"},
	} {
		if out := runRefusedIperf3(t, ts.i3port, "", args...); !strings.Contains(out, refused) {
			t.Errorf("iperf3 %v printed:\n%s\nwant %q", args, out, refused)
		}
	}
	if !ts.logsHave("refused a UDP test in which this server would send at 2.00 Gbits/sec: it sends at most 1.00 Gbits/sec to a client that did not authenticate (--max-rate)") {
		t.Errorf("no log line for the refusal:\n%s", strings.Join(ts.Logs(), "\n"))
	}
	if !ts.logsHave("would send unpaced (-b 0)") {
		t.Errorf("no log line for the unpaced test:\n%s", strings.Join(ts.Logs(), "\n"))
	}
	if rep, _ := runIperf3Client(t, ts.i3port, "-u", "-R", "-b", "10M", "-t", "1"); rep == nil {
		t.Error("a UDP -R test under the cap did not run")
	}

	f := newAuthFiles(t)
	auth := startI3Server(t, session.ServerConfig{}, Config{Auth: f.server(t, nil)})
	t.Setenv("IPERF3_PASSWORD", "secret")
	// A timed test: iperf3's client ends a -R -n test only once it has
	// received all n bytes, so one datagram lost on a loaded host (2 Gbit/s
	// into its socket buffer) left it waiting until it was killed.
	if rep, _ := runIperf3Client(t, auth.i3port, "-u", "-R", "-b", "2G", "-t", "1", "--username", "alice", "--rsa-public-key-path", f.Public); rep == nil {
		t.Error("an authenticated UDP -R test above the default cap did not run")
	}
}
