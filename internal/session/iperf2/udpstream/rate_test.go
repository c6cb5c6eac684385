package udpstream

import (
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestReceiverRateLeavesOutTheFIN: 100 kbit/s of 1470-byte datagrams for
// 1 s is 9 datagrams at 8.5/s plus a FIN at the end. The receiver's rate
// must read the 99.96 kbit/s those carry, not the 118 kbit/s that bytes over the duration
// would give; bytes and packets still count the FIN as iperf does.
func TestReceiverRateLeavesOutTheFIN(t *testing.T) {
	h := iperf2.NewClientHeader(true, 1, 5001)
	tmpl := (&Sender{Layout: iperf2.LayoutModern, Header: h.AppendUDPTo(nil), Length: 1470}).Template(session.FillPattern)
	base := time.Unix(1_700_000_000, 0)
	gap := 2 * time.Second / 17 // 8.5 datagrams/s
	rx := NewReceiver(netip.MustParseAddrPort("127.0.0.1:40000"), tmpl, base)
	for id := int64(1); id <= 9; id++ {
		at := base.Add(time.Duration(id-1) * gap)
		iperf2.PutDatagram(tmpl, iperf2.LayoutModern, id, at)
		rx.Feed(tmpl, at)
	}
	fin := base.Add(time.Second)
	iperf2.PutDatagram(tmpl, iperf2.LayoutModern, -10, fin)
	if rx.Feed(tmpl, fin) == nil {
		t.Fatal("no report for the FIN")
	}
	r := rx.Summary()
	if r.Packets != 10 || r.Bytes != 10*1470 || r.Total != 10 {
		t.Errorf("packets %d bytes %d total %d, want 10, 14700, 10", r.Packets, r.Bytes, r.Total)
	}
	const want = 8.5 * 1470 * 8 // 99960 bit/s: what 8.5 datagrams/s of 1470 bytes carry
	if math.Abs(r.BitsPerSecond-want)/want > 1e-6 || math.Abs(r.PacketsPerSecond-8.5)/8.5 > 1e-6 {
		t.Errorf("rate %.1f bit/s %.4f pps, want %.0f and 8.5", r.BitsPerSecond, r.PacketsPerSecond, want)
	}
}
