package udpstream

import (
	"net/netip"
	"testing"
	"time"

	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestPeekAcrossThe32BitWrap: a header-less stream's ids past 2^31 are
// read extended, as Feed reads them, by the questions asked of a datagram
// before it is fed: Ahead (a skipped id after the wrap is seen, where
// the raw id read as a FIN and was never ahead) and OpensNewTest (a
// lost id past the wrap arriving late belongs to the test; a sender
// restarting at 1 opens a new one).
func TestPeekAcrossThe32BitWrap(t *testing.T) {
	at := time.Now()
	dg := func(id int64) []byte {
		b := make([]byte, 18)
		i2wire.PutDatagram(b, i2wire.LayoutModern, int64(int32(uint32(id))), at) // a 32-bit sender's id
		copy(b[12:16], "zzzz")
		return b
	}
	const w = int64(1) << 31
	first := dg(w - 2)
	rx := NewReceiver(netip.MustParseAddrPort("127.0.0.1:40000"), first, at)
	for id := w - 2; id <= w; id++ {
		rx.Feed(dg(id), at)
	}
	if rx.Ahead(dg(w + 1)) {
		t.Error("id 2^31+1, the next one, is taken as ahead")
	}
	if !rx.Ahead(dg(w + 2)) {
		t.Error("id 2^31+2, one past the next, is not ahead")
	}
	rx.Feed(dg(w+2), at) // 2^31+1 lost
	rx.Feed(dg(-(w + 3)), at)
	if !rx.Done() {
		t.Fatal("the FIN after 2^31+2 did not end the test")
	}
	if rx.OpensNewTest(dg(w + 1)) {
		t.Error("the lost id 2^31+1, arriving late, opens a new test")
	}
	if !rx.OpensNewTest(dg(1)) {
		t.Error("a sender starting again at id 1 does not open a new test")
	}
}
