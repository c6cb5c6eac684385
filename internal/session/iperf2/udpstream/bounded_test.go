package udpstream

import (
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestReceiverMemoryBounded feeds a test a million datagrams, every 1000th
// one lost and every 500th sent twice: the arrival window keeps the size
// it had after the first
// window-full, while the counts stay exact (the id window and the
// transit histograms are fixed in size by construction: stats' tests).
func TestReceiverMemoryBounded(t *testing.T) {
	h := iperf2.NewClientHeader(true, 1, 5001)
	tmpl := (&Sender{Layout: iperf2.LayoutModern, Header: h.AppendUDPTo(nil), Length: 100}).Template(session.FillPattern)
	base := time.Unix(1_700_000_000, 0)
	rx := NewReceiver(netip.MustParseAddrPort("127.0.0.1:40000"), tmpl, base)
	const n = 1_000_000
	var lost, dups int64
	var capAt int
	for id := int64(1); id <= n; id++ {
		at := base.Add(time.Duration(id) * time.Microsecond)
		if id%1000 == 500 {
			lost++
			continue
		}
		iperf2.PutDatagram(tmpl, iperf2.LayoutModern, id, at.Add(-time.Duration(id%97)*time.Microsecond))
		rx.Feed(tmpl, at)
		if id%500 == 0 {
			rx.Feed(tmpl, at)
			dups++
		}
		if id == 2*arrivalWindow {
			capAt = rx.arrivals.Cap()
		}
	}
	if capAt != arrivalWindow || rx.arrivals.Cap() != capAt || rx.arrivals.Len() != arrivalWindow {
		t.Fatalf("arrival window: cap %d after %d datagrams, %d (len %d) after %d, want %d throughout",
			capAt, 2*arrivalWindow, rx.arrivals.Cap(), rx.arrivals.Len(), n, arrivalWindow)
	}
	s := rx.Summary()
	if s.Packets != n-lost || s.Lost != lost || s.Duplicates == nil || *s.Duplicates != dups || s.OutOfOrder != 0 {
		t.Fatalf("counts: %d received, %d lost, %v duplicates, %d out of order; want %d, %d, %d, 0",
			s.Packets, s.Lost, ptrVal(s.Duplicates), s.OutOfOrder, n-lost, lost, dups)
	}
	if s.Transit == nil || s.Transit.Count != n-lost || s.Transit.Max-s.Transit.Min != 96 {
		t.Fatalf("transit: %+v, want %d timed spanning 96 µs", s.Transit, n-lost)
	}
}

func ptrVal(p *int64) any {
	if p == nil {
		return "none"
	}
	return *p
}
