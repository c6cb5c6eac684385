package iperf2

import (
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestReverseReceiverReads64BitIDs: a -R client's receiver reads the
// server's ids as 64-bit ones, as its header asked, so that id 2^31 and
// beyond (a long test at line rate) is data, not a false FIN that would
// end the test early with wrong counts.
func TestReverseReceiverReads64BitIDs(t *testing.T) {
	cfg := &session.ClientConfig{Dialect: session.DialectIperf2, UDP: true, Length: 1470, Duration: time.Hour}
	hdr := header(cfg, true)
	if !reverseSeq64(hdr) {
		t.Fatal("our 2.1 -R header does not ask for 64-bit ids")
	}
	peer := netip.MustParseAddrPort("127.0.0.1:5001")
	at := time.Now()
	rx := udpstream.NewReceiverAs(peer, i2wire.LayoutModern, reverseSeq64(hdr), at)
	b := make([]byte, 1470)
	first := int64(1<<31) - 3
	for i := range int64(6) { // 2^31-3 .. 2^31+2: across the 32-bit sign
		i2wire.PutDatagram(b, i2wire.LayoutModern, first+i, at)
		rx.Feed(b, at.Add(time.Duration(i)*time.Microsecond))
		if rx.Done() {
			t.Fatalf("id %d ended the test: read as a FIN", first+i)
		}
	}
	i2wire.PutDatagram(b, i2wire.LayoutModern, -(first + 6), at)
	if rep := rx.Feed(b, at.Add(10*time.Microsecond)); rep == nil || !rx.Done() {
		t.Fatal("the FIN after id 2^31+2 did not end the test with a report")
	}
	rx.Publish()
	if got := rx.Counters().Packets.Load(); got != 7 {
		t.Errorf("counted %d datagrams (6 and the FIN), want 7", got)
	}
}
