package session

import (
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/udpio"
)

// TestReinjectKeepsArrival: a datagram handed back to the listener keeps
// its arrival on the monotonic clock, which the idle timeout measures
// from, not only its wall-clock stamp.
func TestReinjectKeepsArrival(t *testing.T) {
	var s Server
	now := time.Now()
	m := udpio.Message{Buf: []byte("datagram"), N: 8, Addr: netip.MustParseAddrPort("127.0.0.1:4000"), Time: now.Round(0), Arrived: now}
	s.Reinject(&m)
	if len(s.drain.back) != 1 {
		t.Fatalf("%d datagrams handed back, want 1", len(s.drain.back))
	}
	if got := s.drain.back[0]; got.Arrived != m.Arrived || got.Time != m.Time || string(got.Buf[:got.N]) != "datagram" {
		t.Errorf("handed back %+v; want a copy of %+v", got, m)
	}
}
