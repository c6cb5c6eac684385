package iperf2

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	"github.com/wirebench/wirebench/internal/udpio"
	"github.com/wirebench/wirebench/internal/units"
)

// offloadAvailable skips the test when this kernel takes neither UDP GSO
// nor GRO.
func offloadAvailable(t *testing.T) {
	t.Helper()
	c, err := udpio.Listen(context.Background(), "udp4", "127.0.0.1:0", udpio.Options{GSO: true, GRO: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if caps := c.Capabilities(); !caps.GSO || !caps.GRO {
		t.Skipf("this kernel lacks UDP GSO or GRO (%+v)", caps)
	}
}

// TestDialUDPOffload: the client's sockets take GSO when the rate forms
// batches (≥ 20,000 datagrams/s per stream, or unpaced), GRO always, and
// neither when switched off.
func TestDialUDPOffload(t *testing.T) {
	offloadAvailable(t)
	cases := []struct {
		name     string
		cfg      session.ClientConfig
		gso, gro bool
	}{
		{"low rate", session.ClientConfig{Rate: units.Rate{Value: 1e6}, Length: 1470}, false, true},
		{"high rate", session.ClientConfig{Rate: units.Rate{Value: 1488095, PPS: true}, Length: 18}, true, true},
		{"high rate split over streams", session.ClientConfig{Rate: units.Rate{Value: 30000, PPS: true}, Length: 18, Parallel: 2}, false, true},
		{"--no-gso", session.ClientConfig{Rate: units.Rate{Value: 1488095, PPS: true}, Length: 18, NoGSO: true}, false, true},
		{"--no-gro", session.ClientConfig{Rate: units.Rate{Value: 1488095, PPS: true}, Length: 18, NoGRO: true}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Host, cfg.Port, cfg.UDP = loHost, 9, true
			c, err := cfg.DialUDP(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if caps := c.Capabilities(); caps.GSO != tc.gso || caps.GRO != tc.gro {
				t.Errorf("GSO %v GRO %v, want %v %v", caps.GSO, caps.GRO, tc.gso, tc.gro)
			}
		})
	}
}

// gsoRate is a rate at which our client sends with GSO: 60,000 datagrams/s
// of 64 bytes, at least 3 per GSO packet (more when it catches up).
var gsoRate = units.Rate{Value: 60000, PPS: true}

// TestInteropGSOClientToIperf: with GSO on, real iperf 2.1.8 still sees
// each datagram as its own: the datagram count and ids it prints match what
// we sent, and it received exactly 64 bytes per datagram (it reads UDP with
// a 1470-byte buffer, so a GSO packet arriving whole would be one datagram
// of 192 bytes or more, with one id). Loss alone tells nothing here: a
// busy test machine starves iperf's reader at this rate.
func TestInteropGSOClientToIperf(t *testing.T) {
	iperfBinary(t)
	offloadAvailable(t)
	p, port := startIperfServer(t, true)
	const length = 64
	r := runOurClient(t, session.ClientConfig{Host: loHost, Port: port, UDP: true, Rate: gsoRate, Duration: time.Second, Length: length})
	out := waitLines(t, p, 1, udpRecvLine)
	l := findLine(t, out, "the server's receive line", udpRecvLine)
	if l.Total != r.Sender.Packets {
		t.Errorf("iperf counted %d datagrams (highest id), we sent %d: %v", l.Total, r.Sender.Packets, l)
	}
	if got := l.Total - l.Lost; l.Bytes != got*length {
		t.Errorf("iperf received %d bytes in %d datagrams: not %d bytes each (%v)", l.Bytes, got, length, l)
	}
	if l.Lost > 0 {
		t.Logf("iperf lost %d of %d (its receiver starved on this busy machine)", l.Lost, l.Total)
	}
	checkPeerReport(t, r, l)
}

// TestOffloadOurClientToOurServer: a GSO client to our GRO server at 1 GbE
// minimum-frame rate for a short test: every datagram is counted one by
// one, in order, and the server states its per-batch jitter method; with
// --no-gro on the server the method is per datagram.
func TestOffloadOurClientToOurServer(t *testing.T) {
	offloadAvailable(t)
	for _, noGRO := range []bool{false, true} {
		s := &ourServer{results: make(chan *result.Result, 4), logs: &loopback.Buffer{}}
		s.start(t, session.ServerConfig{NoGRO: noGRO})
		r := runOurClient(t, session.ClientConfig{Host: loHost, Port: s.srv.Port(), UDP: true,
			Rate: units.Rate{Value: 200000, PPS: true}, Duration: 500 * time.Millisecond, Length: 18})
		sr := s.collect(t, 1)[0]
		rv := sr.Receiver
		if rv == nil || rv.Source != "local" {
			t.Fatalf("server receiver %+v", rv)
		}
		want := result.JitterPerBatch
		if noGRO {
			want = result.JitterPerDatagram
		}
		if rv.JitterMethod != want {
			t.Errorf("--no-gro %v: jitter method %q, want %q", noGRO, rv.JitterMethod, want)
		}
		// Counted one by one: received + lost is what was sent (the FIN
		// included), none twice, none out of order.
		if rv.Packets+rv.Lost != r.Sender.Packets || dupsOf(rv) != 0 || rv.OutOfOrder != 0 {
			t.Errorf("--no-gro %v: server counted %d + %d lost (%d dup, %d ooo) of %d sent",
				noGRO, rv.Packets, rv.Lost, rv.Duplicates, rv.OutOfOrder, r.Sender.Packets)
		}
		// Loss our own socket's drops explain is this busy host's reader
		// falling behind 200,000 datagrams/s (said in the result);
		// loss beyond them would be a counting fault. Under GRO the
		// kernel counts a dropped coalesced packet once (one skb), and
		// our client's GSO packets, which loopback delivers whole, hold
		// up to 64 datagrams: each drop explains up to 64, the bound the
		// result states. (CI under the race detector beside other work
		// once saw 5576 lost to 4280 drops.)
		perDrop := int64(64)
		if noGRO {
			perDrop = 1
		}
		if unexplained := rv.Lost - rv.HostDrops*perDrop; unexplained*100 > r.Sender.Packets {
			t.Errorf("--no-gro %v: lost %d of %d, %d of them our socket's drops", noGRO, rv.Lost, r.Sender.Packets, rv.HostDrops)
		} else if rv.Lost > 0 {
			t.Logf("--no-gro %v: lost %d of %d, %d of them our socket's drops", noGRO, rv.Lost, r.Sender.Packets, rv.HostDrops)
		}
		if rv.Bytes != rv.Packets*18 {
			t.Errorf("--no-gro %v: %d bytes in %d datagrams", noGRO, rv.Bytes, rv.Packets)
		}
	}
}
