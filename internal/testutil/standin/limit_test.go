package standin

import (
	"testing"
	"time"
)

// The frame-rate limit serves its rate from a queue of its depth and drops
// what arrives to a full queue, counting it; the served times are its own
// pace; the FIN waits behind the queue and is never dropped.
func TestFrameLimit(t *testing.T) {
	s := &udpServe{o: UDPServerOptions{FramesPerSecond: 1000, FrameQueue: 20}, res: &UDPServerResult{}}
	t0 := time.Now()
	var first, last time.Time
	passed := 0
	// 3,000 datagrams offered in bursts of 30 every 10 ms: 3,000/s.
	for i := range 3000 {
		served, ok := s.admit(int32(i), t0.Add(time.Duration(i/30)*10*time.Millisecond))
		if !ok {
			continue
		}
		if passed == 0 {
			first = served
		}
		last = served
		passed++
	}
	// 1,000 served in the second, plus the queue's 20 still waiting.
	if passed < 1000 || passed > 1021 {
		t.Errorf("%d of 3000 passed a limit of 1000/s over 1 s", passed)
	}
	if pace := float64(passed-1) / last.Sub(first).Seconds(); pace < 999 || pace > 1001 {
		t.Errorf("served at %.1f/s, want 1000/s", pace)
	}
	if s.res.Limited != int64(3000-passed) {
		t.Errorf("%d counted as limited, %d dropped", s.res.Limited, 3000-passed)
	}
	if fin, ok := s.admit(-3000, t0.Add(time.Second)); !ok || fin.Before(last) {
		t.Errorf("the FIN: passed %v at %v, the last datagram served at %v", ok, fin.Sub(t0), last.Sub(t0))
	}
	free := &udpServe{res: &UDPServerResult{}}
	if at, ok := free.admit(1, t0); !ok || !at.Equal(t0) || free.res.Limited != 0 {
		t.Error("no limit delayed or dropped a datagram")
	}
}
