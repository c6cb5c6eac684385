package echo

import (
	"net/netip"
	"testing"
	"time"
)

// TestUDPSessionSurvivesWallClockStep: a UDP echo client that keeps
// sending while the wall clock steps 10 s back (its datagrams' receive
// times are the kernel's wall-clock stamps) is not ended as silent: the
// idle timeout runs on the server's own clock (cfg.Now, time.Now in use:
// monotonic). Before, the stamps were compared with that clock and the
// session ended at the step.
func TestUDPSessionSurvivesWallClockStep(t *testing.T) {
	mono := time.Unix(1000, 0) // the server's clock: no step
	s := NewServer(ServerConfig{IdleTimeout: 5 * time.Second, Now: func() time.Time { return mono }})
	a := netip.MustParseAddrPort("127.0.0.1:4000")
	req := Append(nil, Message{Kind: KindRequest, Len: 100, ID: 1})
	wall := mono // the kernel's stamps: the same clock until it steps
	for i := range 20 {
		if i == 10 {
			wall = wall.Add(-10 * time.Second)
		}
		s.Datagram(a, req, wall)
		if s.Done(a) {
			t.Fatalf("datagram %d: a session that sends every 100 ms was ended as silent", i)
		}
		mono, wall = mono.Add(100*time.Millisecond), wall.Add(100*time.Millisecond)
	}
	mono = mono.Add(5*time.Second + time.Millisecond)
	if !s.Done(a) {
		t.Error("a session silent past the idle timeout is not done")
	}
}
