package iperf2

import (
	"net"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/standin"
)

// Source-port reuse (issue 16, item 1): the kernel may give a new client
// the source port of one whose test the server still keeps (to answer late
// FINs). TestExactAccounting/zperf-old/* failed this way: the zperf-old
// run's datagrams went to the finished zperf-new test on the same port,
// which answered with its old modern report, and the zperf-old stand-in
// parsed it at offset 12 as garbage. Here every run is made to share one
// source port, so the case is no longer left to chance.

// freeUDPPort returns a loopback UDP port no socket holds right now.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func TestSourcePortReuse(t *testing.T) {
	ts := startServer(t, session.ServerConfig{IdleTimeout: 500 * time.Millisecond})
	port := freeUDPPort(t)
	runs := []struct {
		name    string
		run     udpStandinClient
		dialect string
		impair  standin.Impairment
	}{
		{"zperf-new", standin.ZperfNewUDPClient, session.DialectRaw, standin.Impairment{Swap: [][2]int64{{20, 21}}}},
		{"zperf-old after zperf-new", standin.ZperfOldUDPClient, session.DialectIperf2Legacy, standin.Impairment{Drop: []int64{0, 5}}},
		// Its id 0 is one the run before lost: held as a late datagram,
		// then fed to this run when its id 1 opens the new test.
		{"zperf-old again", standin.ZperfOldUDPClient, session.DialectIperf2Legacy, standin.Impairment{Repeat: []int64{3}}},
		{"iperf-2.0.5 after zperf-old", standin.Legacy205UDPClient, session.DialectIperf2Legacy, standin.Impairment{Drop: []int64{1}}},
		{"zperf-new after iperf-2.0.5", standin.ZperfNewUDPClient, session.DialectRaw, standin.Impairment{}},
	}
	for _, r := range runs {
		c, err := r.run(deadlineCtx(t), ts.addr, standin.UDPClientOptions{Count: 60, RateBps: standinRate, Impair: r.impair, LocalPort: port})
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if got := c.Local.(*net.UDPAddr).Port; got != port {
			t.Fatalf("%s ran from port %d, want %d", r.name, got, port)
		}
		res := ts.resultFrom(c.Local.String())
		checkUDPServerCounts(t, res, c, r.dialect)
		checkStandinReport(t, c, res.Receiver)
	}
}

// TestLateDatagramAfterFIN: a data datagram the finished test counted as
// lost belongs to that test, not to a new one; an id it already received
// is a new test from the same source.
func TestLateDatagramAfterFIN(t *testing.T) {
	ts := startServer(t, session.ServerConfig{IdleTimeout: 500 * time.Millisecond})
	c := udpSock(t, ts)
	for _, id := range []int32{0, 1, 3} {
		send(t, c, legacyDatagram(id))
	}
	send(t, c, legacyDatagram(-4))
	if rep := readReport(t, c); rep.Datagrams != 4 || rep.Errors != 1 {
		t.Fatalf("first report: %d datagrams, %d lost; want 4, 1", rep.Datagrams, rep.Errors)
	}
	first := ts.resultFrom(c.LocalAddr().String())
	send(t, c, legacyDatagram(2)) // late: id 2 was lost in the first test
	send(t, c, legacyDatagram(0)) // received before: a new test
	send(t, c, legacyDatagram(-1))
	if rep := readReport(t, c); rep.Datagrams != 1 || rep.Errors != 0 {
		t.Fatalf("second report: %d datagrams, %d lost; want 1, 0 (the late id 2 must not join it)", rep.Datagrams, rep.Errors)
	}
	second := ts.resultFrom(c.LocalAddr().String())
	if second == first {
		t.Fatal("the second test from the same source got the first test's result")
	}
	if rv := receiverOf(t, second); rv.Packets != 2 || rv.Total != 1 || rv.Lost != 0 || second.Test.Dialect != session.DialectIperf2Legacy {
		t.Errorf("second test: %s, packets/total/lost %d/%d/%d, want iperf2-legacy, 2/1/0", second.Test.Dialect, rv.Packets, rv.Total, rv.Lost)
	}
	if n := ts.resultCount(); n != 2 {
		t.Errorf("%d results, want 2 (the late datagram starts no test)", n)
	}
}
