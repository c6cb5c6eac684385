package iperf3

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
)

// TestCPUInResults: our client fills its CPU use, and our iperf3 client
// and server report theirs to each other (and real iperf3 peers see ours).
func TestCPUInResults(t *testing.T) {
	ts := startI3Server(t, session.ServerConfig{}, Config{})
	r := runShort(t, session.ClientConfig{Host: "127.0.0.1", Port: ts.i3port, Dialect: session.DialectIperf3, Duration: 500 * time.Millisecond})
	if r.CPU == nil || r.CPU.Percent <= 0 || r.CPU.UserSeconds+r.CPU.SystemSeconds <= 0 {
		t.Fatalf("client CPU %+v", r.CPU)
	}
	if r.CPU.Remote == nil || r.CPU.Remote.Percent <= 0 {
		t.Errorf("our server's cpu_util did not reach our client: %+v", r.CPU.Remote)
	}
	sr := ts.waitResults(1)[0]
	if sr.CPU == nil || sr.CPU.Percent <= 0 || sr.CPU.Remote == nil || sr.CPU.Remote.Percent <= 0 {
		t.Errorf("server result CPU %+v", sr.CPU)
	}

	// A real iperf3 client prints what our server sent as remote CPU.
	rep, _ := runIperf3Client(t, ts.i3port, "-t", "1", "-J")
	if c := rep.End.CPUUtilizationPercent; c == nil || c.RemoteTotal <= 0 || c.HostTotal <= 0 {
		t.Errorf("iperf3 -J cpu_utilization_percent = %+v, want remote_total > 0", c)
	}

	// And our client reads a real iperf3 server's.
	port, wait := realIperf3Server(t)
	r = runShort(t, session.ClientConfig{Host: "127.0.0.1", Port: port, Dialect: session.DialectIperf3, Duration: 500 * time.Millisecond})
	wait()
	if r.CPU == nil || r.CPU.Remote == nil || r.CPU.Remote.Percent <= 0 {
		t.Errorf("real iperf3 server's cpu_util not read: %+v", r.CPU)
	}
}
