package iperf3

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/udpio"
	"github.com/wirebench/wirebench/internal/units"
)

// TestIperf3GSOClientAgainstRealServer: the same against real iperf3 3.12.
// Its default receive buffer holds a few milliseconds at this rate, and a
// busy test machine holds its reader off for longer (half lost, in one
// run): -w 4M sets the server's buffer, as iperf3's own client does.
func TestIperf3GSOClientAgainstRealServer(t *testing.T) {
	offloadAvailable(t)
	cfg := session.ClientConfig{UDP: true, Rate: gsoRate, Length: 64, Duration: time.Second, Socket: sockopt.Options{Buffer: 4 << 20}}
	r, rep := runAgainstRealIperf3(t, &cfg)
	var pkts, lost int64
	for _, st := range rep.End.Streams {
		if s := st.UDP; s != nil && !s.Sender && s.Packets != nil && s.LostPackets != nil {
			pkts, lost = *s.Packets, *s.LostPackets
		}
	}
	if pkts == 0 || pkts > r.Sender.Packets || (pkts-lost)*64 != r.Receiver.Bytes {
		t.Errorf("iperf3 counted %d datagrams (%d lost, our receiver figure %d bytes); we sent %d of 64 bytes",
			pkts, lost, r.Receiver.Bytes, r.Sender.Packets)
	}
	// iperf3 reads 64-byte buffers, so a GSO packet seen whole would be
	// one datagram cut to 64 bytes, and its other ids (2 of 3 or more)
	// would count as lost.
	if lost*3 > pkts {
		t.Errorf("iperf3 lost %d of %d (over a third: GSO packets seen whole?)", lost, pkts)
	} else if lost > 0 {
		t.Logf("iperf3 lost %d of %d (its receiver starved on this busy machine)", lost, pkts)
	}
}

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

// gsoRate is a rate at which our client sends with GSO: 60,000 datagrams/s
// of 64 bytes, at least 3 per GSO packet (more when it catches up).
var gsoRate = units.Rate{Value: 60000, PPS: true}
