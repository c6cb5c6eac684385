package engine_test

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
)

// stepClock is a pacer.Clock whose Sleep moves its time on at once.
type stepClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps int
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps++
	if d > 0 {
		c.t = c.t.Add(d)
	}
	return ctx.Err()
}

// readIDs reads what rcv holds now: the ids (first 8 bytes) in order.
func readIDs(t *testing.T, rcv udpio.Conn) []int64 {
	t.Helper()
	msgs := make([]udpio.Message, 64)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 64)
	}
	var ids []int64
	for {
		_ = rcv.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := rcv.ReadBatch(msgs)
		for _, m := range msgs[:n] {
			ids = append(ids, int64(binary.BigEndian.Uint64(m.Buf)))
		}
		if err != nil {
			return ids
		}
	}
}

// TestSendUDPStreamsEachOnItsSchedule: streams of different rates sent
// from one thread each send exactly their own rate's datagrams over the
// test, with their own ids in order; the thread sleeps only when no
// stream has a datagram due, so streams due at once cost one wake; and a stream whose peer refuses it ends
// with an error while the other goes on to its end.
func TestSendUDPStreamsEachOnItsSchedule(t *testing.T) {
	clock := &stepClock{t: time.Unix(1000, 0)}
	fast, fastRx := loopPair(t, false)
	slow, slowRx := loopPair(t, false)
	cfg := func(pps float64, first int64) engine.UDPSendConfig {
		return engine.UDPSendConfig{Template: make([]byte, 18), Stamp: stampID, PPS: pps, Duration: time.Second, FirstID: first, Clock: clock}
	}
	var cf, cs stats.Counters
	res, errs := engine.SendUDPStreams(context.Background(), []engine.UDPStream{
		{Conn: fast, Config: cfg(10000, 1), Counters: &cf},
		{Conn: slow, Config: cfg(1000, 0), Counters: &cs},
	})
	for i, want := range []int64{10000, 1000} {
		if errs[i] != nil || res[i].Packets != want {
			t.Errorf("stream %d: sent %d, error %v; want %d and none", i, res[i].Packets, errs[i], want)
		}
	}
	if cf.Packets.Load() != 10000 || cs.Packets.Load() != 1000 {
		t.Errorf("counters %d and %d; want 10000 and 1000", cf.Packets.Load(), cs.Packets.Load())
	}
	for i, c := range []struct {
		rx    udpio.Conn
		first int64
		n     int
	}{{fastRx, 1, 10000}, {slowRx, 0, 1000}} {
		ids := readIDs(t, c.rx)
		if len(ids) != c.n || ids[0] != c.first || ids[len(ids)-1] != c.first+int64(c.n)-1 {
			t.Fatalf("stream %d: received %d ids; want %d from %d", i, len(ids), c.n, c.first)
		}
		for k := 1; k < len(ids); k++ {
			if ids[k] != ids[k-1]+1 {
				t.Fatalf("stream %d: id %d after %d", i, ids[k], ids[k-1])
			}
		}
	}
	// The slow stream's datagrams are due when one of the fast one's is
	// (every tenth): the thread wakes 10,000 times in the second, where a
	// thread per stream would wake 11,000 times.
	if clock.sleeps > 10050 {
		t.Errorf("%d sleeps in a second of two streams; want about 10,000", clock.sleeps)
	}

	// A closed port: that stream ends with an error, the other does not.
	gone, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	to := gone.LocalAddr().String()
	gone.Close()
	refused, err := udpio.Dial(context.Background(), "udp4", to, "", udpio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()
	ok, _ := loopPair(t, false)
	slowCfg := func() engine.UDPSendConfig {
		c := cfg(1000, 0)
		c.Duration = 10 * time.Second
		return c
	}
	res, errs = engine.SendUDPStreams(context.Background(), []engine.UDPStream{
		{Conn: refused, Config: slowCfg(), Counters: new(stats.Counters)},
		{Conn: ok, Config: slowCfg(), Counters: new(stats.Counters)},
	})
	if errs[0] == nil || errs[1] != nil || res[1].Packets != 10000 {
		t.Errorf("refused stream: error %v; other: %d sent, error %v; want an error, then 10000 and none", errs[0], res[1].Packets, errs[1])
	}
}
