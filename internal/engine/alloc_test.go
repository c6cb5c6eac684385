package engine_test

import (
	"context"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
)

// loopPair opens a receiving socket and a sender connected to it on
// loopback, with UDP GSO and GRO as asked.
func loopPair(tb testing.TB, offload bool) (snd, rcv udpio.Conn) {
	tb.Helper()
	ctx := context.Background()
	rcv, err := udpio.Listen(ctx, "udp4", "127.0.0.1:0", udpio.Options{ReadBuffer: 8 << 20, GRO: offload})
	if err != nil {
		tb.Fatalf("listening on loopback: %v", err)
	}
	tb.Cleanup(func() { rcv.Close() })
	snd, err = udpio.Dial(ctx, "udp4", rcv.LocalAddr().String(), "", udpio.Options{GSO: offload})
	if err != nil {
		tb.Fatalf("dialing loopback: %v", err)
	}
	tb.Cleanup(func() { snd.Close() })
	return snd, rcv
}

func stampID(b []byte, id int64, _ time.Time) { binary.BigEndian.PutUint64(b, uint64(id)) }

// mallocs is the process's count of heap allocations so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// sendAllocs returns the allocations of one unpaced SendUDP of n datagrams.
func sendAllocs(t *testing.T, conn udpio.Conn, n int64) uint64 {
	t.Helper()
	var c stats.Counters
	before := mallocs()
	res, err := engine.SendUDP(context.Background(), conn, engine.UDPSendConfig{
		Template: make([]byte, 18), Stamp: stampID, Bytes: n * 18, Duration: time.Minute,
	}, &c)
	after := mallocs()
	if err != nil || res.Packets != n {
		t.Fatalf("SendUDP sent %d of %d: %v", res.Packets, n, err)
	}
	return after - before
}

// TestSendUDPAllocsPerDatagram: SendUDP's setup allocates, its loop does
// not: 20,000 more datagrams cost (almost) no more allocations than 1,000.
func TestSendUDPAllocsPerDatagram(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, offload := range []bool{false, true} {
		snd, _ := loopPair(t, offload) // nobody reads: the kernel drops what overflows
		sendAllocs(t, snd, 100)        // warm up
		small := sendAllocs(t, snd, 1000)
		large := sendAllocs(t, snd, 21000)
		t.Logf("offload=%v: %d allocations for 1,000 datagrams, %d for 21,000", offload, small, large)
		// A few allocations of the runtime or of other goroutines may
		// land in between; one per 1,000 datagrams would be a leak.
		if large > small+20 {
			t.Errorf("offload=%v: 1,000 datagrams cost %d allocations, 21,000 cost %d: the send loop allocates",
				offload, small, large)
		}
	}
}

// receiveAllocs returns the allocations of one ReceiveUDP that counts n
// datagrams sent by a goroutine in batches of 64.
func receiveAllocs(t *testing.T, snd, rcv udpio.Conn, n int) uint64 {
	t.Helper()
	msgs := make([]udpio.Message, 64)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 18)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for sent := 0; sent < 4*n && !stop.Load(); sent += len(msgs) {
			if _, err := snd.WriteBatch(msgs); err != nil {
				return
			}
			time.Sleep(20 * time.Microsecond) // let the receiver keep up
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := 0
	before := mallocs()
	err := engine.ReceiveUDP(ctx, rcv, engine.UDPReceiveConfig{BufSize: 2048, Batch: 64, Idle: 5 * time.Second},
		func(m *udpio.Message) bool { got++; return got < n })
	after := mallocs()
	stop.Store(true)
	wg.Wait()
	if err != nil || got < n {
		t.Fatalf("received %d of %d: %v", got, n, err)
	}
	return after - before
}

// TestReceiveUDPAllocsPerDatagram: the receive loop allocates nothing per
// datagram, with and without GRO.
func TestReceiveUDPAllocsPerDatagram(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, offload := range []bool{false, true} {
		snd, rcv := loopPair(t, offload)
		small := receiveAllocs(t, snd, rcv, 1000)
		large := receiveAllocs(t, snd, rcv, 21000)
		t.Logf("offload=%v: %d allocations for 1,000 datagrams, %d for 21,000", offload, small, large)
		if large > small+40 {
			t.Errorf("offload=%v: 1,000 datagrams cost %d allocations, 21,000 cost %d: the receive loop allocates",
				offload, small, large)
		}
	}
}

// TestTCPLoopAllocs: SendTCP and ReceiveTCP allocate in their setup only:
// moving 64 MiB costs (almost) no more allocations than moving 1 MiB.
func TestTCPLoopAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	ctx := context.Background()
	count := func(n int64) uint64 {
		before := mallocs()
		sent, got := tcpTransfer(ctx, t, 128<<10, n)
		after := mallocs()
		if sent.Bytes != n || got.Bytes != n {
			t.Fatalf("sent %d and received %d of %d bytes", sent.Bytes, got.Bytes, n)
		}
		return after - before
	}
	count(1 << 20) // warm up
	small, large := count(1<<20), count(64<<20)
	t.Logf("%d allocations for 1 MiB (8 writes), %d for 64 MiB (512 writes)", small, large)
	// The 504 more writes (and the reads) would add hundreds if the loops
	// allocated; a few may come from the runtime or other goroutines.
	if large > small+30 {
		t.Errorf("1 MiB cost %d allocations, 64 MiB cost %d: the TCP loops allocate", small, large)
	}
}
