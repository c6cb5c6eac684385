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

// TestServer32BitIDsAcrossTheWrap: a stream whose ids are 32 bits (no
// client header: too short for one, a legacy peer, a connect-back) is
// counted exactly through id 2^31, where reading the 32 bits alone took
// the first id past it for the FIN, and its FIN after that is answered.
func TestServer32BitIDsAcrossTheWrap(t *testing.T) {
	for _, l := range []i2wire.Layout{i2wire.LayoutModern, i2wire.LayoutLegacy} {
		peer := netip.MustParseAddrPort("127.0.0.1:40000")
		at := time.Now()
		b := make([]byte, 18)
		first := int64(1<<31) - 3
		put := func(id int64) {
			i2wire.PutDatagram(b, l, int64(int32(uint32(id))), at) // what a 32-bit sender writes
			if l != i2wire.LayoutLegacy {
				copy(b[12:16], []byte("zzzz")) // no upper half: zperf's filler
			}
		}
		put(first)
		rx := udpstream.NewReceiver(peer, b, at)
		rx.Feed(b, at)
		rx.Publish()
		lostBefore := rx.Counters().Lost.Load() // the ids before the first, as for any stream that starts late
		for id := first + 1; id < first+6; id++ {
			put(id)
			if rx.Feed(b, at) != nil || rx.Done() {
				t.Fatalf("%v: id %d ended the test: read as a FIN", l, id)
			}
		}
		put(-(first + 6))
		if rep := rx.Feed(b, at); rep == nil || !rx.Done() {
			t.Fatalf("%v: the FIN after id 2^31+2 did not end the test with a report", l)
		}
		rx.Publish()
		if got, lost := rx.Counters().Packets.Load(), rx.Counters().Lost.Load(); got != 7 || lost != lostBefore {
			t.Errorf("%v: counted %d datagrams (6 and the FIN), %d lost after the first, want 7 and 0", l, got, lost-lostBefore)
		}
	}
}
