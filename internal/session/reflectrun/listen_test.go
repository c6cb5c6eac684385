package reflectrun

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestQuiet: the silence that ends listening is four times the slowest
// round trip or twice the longest pause between answers, from QuietMin up
// to the drain; the drain while nothing came back.
func TestQuiet(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct{ slow, pause, drain, want time.Duration }{
		{0, 0, 500 * ms, 500 * ms}, {10 * ms, 1 * ms, 500 * ms, QuietMin}, {40 * ms, 5 * ms, 500 * ms, 160 * ms},
		{10 * ms, 120 * ms, 500 * ms, 240 * ms}, {200 * ms, 0, 500 * ms, 500 * ms}, {40 * ms, 0, 120 * ms, 120 * ms},
		{40 * ms, 0, 50 * ms, 50 * ms},
	} {
		if got := Quiet(c.slow, c.pause, c.drain); got != c.want {
			t.Errorf("Quiet(%v, %v, %v) = %v, want %v", c.slow, c.pause, c.drain, got, c.want)
		}
	}
}

// TestWaitLateEnds: listening after the last send ends with every answer
// back (the receiver ended), with a silence of Quiet, or at the drain,
// whichever comes first, and says which.
func TestWaitLateEnds(t *testing.T) {
	var res Result
	rx := newReturns(&res, 64)
	done := make(chan error, 1)
	if got := waitLate(done, rx, time.Now(), 50*time.Millisecond); got != ListenDrain {
		t.Errorf("no answer, so no round trip to go by: %q, want %q", got, ListenDrain)
	}
	rx.rtt.Record(time.Millisecond)
	if got := waitLate(done, rx, time.Now(), 10*time.Second); got != ListenQuiet {
		t.Errorf("a round trip of 1 ms: %q, want %q (after QuietMin)", got, ListenQuiet)
	}
	rx.rtt.Record(time.Hour)
	start := time.Now()
	if got := waitLate(done, rx, start, 30*time.Millisecond); got != ListenDrain {
		t.Errorf("a round trip of an hour: %q, want %q", got, ListenDrain)
	}
	if el := time.Since(start); el < 30*time.Millisecond {
		t.Errorf("listened %v, less than the drain of 30ms", el)
	}
	errBack := errors.New("receiver's end")
	done <- errBack
	if got := waitLate(done, rx, time.Now(), 10*time.Second); got != ListenAllBack {
		t.Errorf("the receiver ended: %q, want %q", got, ListenAllBack)
	}
	if err := <-done; err != errBack {
		t.Errorf("the receiver's result was not put back: %v", err)
	}
}

// TestRunStopsListeningWhenAnswersStop: against a reflector that answers
// all but every tenth datagram, a run with a drain of 10 s stops
// listening once the answers stopped, well before the drain, with every
// answer counted.
func TestRunStopsListeningWhenAnswersStop(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	answered := make(chan int64, 1)
	go func() {
		var n int64
		buf := make([]byte, 2048)
		for {
			pc.SetReadDeadline(time.Now().Add(2 * time.Second))
			k, from, err := pc.ReadFrom(buf)
			if err != nil {
				answered <- n
				return
			}
			id, _, _, ok := i2wire.ParseDatagram(buf[:k], reflectLayout, false)
			if ok && id%10 != 0 {
				if _, err := pc.WriteTo(buf[:k], from); err == nil {
					n++
				}
			}
		}
	}()
	drain := 10 * time.Second
	res, err := Run(context.Background(), Config{Host: "127.0.0.1", Port: pc.LocalAddr().(*net.UDPAddr).Port, Length: 64, PPS: 2000, Packets: 500, Drain: drain})
	if err != nil {
		t.Fatal(err)
	}
	pc.Close()
	n := <-answered
	if res.Sent != 500 || res.Received != n || n != 450 {
		t.Fatalf("sent %d, %d back; want 500 sent and the reflector's %d answers (450) back", res.Sent, res.Received, n)
	}
	if res.ListenEnd != ListenQuiet || res.Listened >= drain {
		t.Fatalf("listened %v after the last send (%q); want it ended by the answers' silence, under the %v drain", res.Listened, res.ListenEnd, drain)
	}
}
