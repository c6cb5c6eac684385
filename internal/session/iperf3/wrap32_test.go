package iperf3

import (
	"fmt"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// TestUDPSeqAcrossThe32BitWrapBetweenWirebenches runs our iperf3 client
// against our server over loopback with every stream's sequence numbers
// starting 10 below 2^32 (the testSeqBase seam), forward, -R and --bidir,
// with 32-bit counters (extended across the wrap) and 64-bit ones, at 18
// and 1470 bytes. Each stream must be counted exactly: every datagram
// sent received, none lost or out of order.
func TestUDPSeqAcrossThe32BitWrapBetweenWirebenches(t *testing.T) {
	testSeqBase.Store(1<<32 - 11) // the first id is 2^32 - 10
	t.Cleanup(func() { testSeqBase.Store(0) })
	for _, c64 := range []bool{false, true} {
		for _, length := range []int{18, 1470} {
			for _, mode := range []string{"forward", "-R", "--bidir"} {
				name := fmt.Sprintf("%s/%dB/64-bit=%v", mode, length, c64)
				t.Run(name, func(t *testing.T) { runSeqWrapTest(t, mode, length, c64) })
			}
		}
	}
}

func runSeqWrapTest(t *testing.T, mode string, length int, c64 bool) {
	const sent = 40
	ts := startI3Server(t, session.ServerConfig{}, Config{})
	cfg := session.ClientConfig{Host: "127.0.0.1", Port: ts.i3port, Dialect: session.DialectIperf3, UDP: true,
		Length: length, Bytes: sent * int64(length), Rate: units.Rate{Value: 2000, PPS: true},
		Reverse: mode == "-R", Bidir: mode == "--bidir", UDPCounters64Bit: c64}
	r := runShort(t, cfg)
	srv := ts.waitResults(1)[0]
	if srv.Error != "" {
		t.Fatalf("server: %s", srv.Error)
	}
	switch mode {
	case "forward":
		checkSeqWrap(t, "the server's count of our stream", srv.Receiver, r.Sender)
	case "-R":
		checkSeqWrap(t, "our count of the server's stream", r.Receiver, srv.Sender)
	case "--bidir":
		checkSeqWrap(t, "the server's count of our stream", srv.Receiver, r.Sender)
		if r.Reverse == nil || srv.Reverse == nil {
			t.Fatalf("no reverse flow: ours %+v, the server's %+v", r.Reverse, srv.Reverse)
		}
		checkSeqWrap(t, "our count of the server's stream", r.Reverse.Receiver, srv.Reverse.Sender)
	}
}

// checkSeqWrap holds a stream's receiver rc to its sender sd: more than
// the 10 ids below 2^32 sent (the count crossed it), all received, none
// lost or out of order.
func checkSeqWrap(t *testing.T, what string, rc *result.Receiver, sd *result.Sender) {
	t.Helper()
	if rc == nil || sd == nil {
		t.Fatalf("%s: receiver %+v, sender %+v", what, rc, sd)
	}
	if sd.Packets < 12 {
		t.Fatalf("%s: %d datagrams sent, too few to cross 2^32", what, sd.Packets)
	}
	if rc.Packets != sd.Packets || rc.Lost != 0 || rc.OutOfOrder != 0 {
		t.Errorf("%s: received %d, lost %d, out of order %d; %d sent", what, rc.Packets, rc.Lost, rc.OutOfOrder, sd.Packets)
	}
}
