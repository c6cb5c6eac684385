package lab_test

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestReflectorCounts sends numbered datagrams to a reflector with a model
// and checks what comes back against the reflector's own counts exactly.
func TestReflectorCounts(t *testing.T) {
	const spec = "loss=5%,reorder=2%,dup=1%,corrupt=1%,seed=5"
	sp, err := model.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	f, err := lab.NewReflector(ctx, "127.0.0.1:0", sp, spec)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan lab.Report, 1)
	go func() {
		rep, err := f.Run(runCtx)
		if err != nil {
			t.Errorf("reflector: %v", err)
		}
		done <- rep
	}()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(f.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadBuffer(4 << 20)
	const n = 3000
	b := make([]byte, 200)
	for i := int64(1); i <= n; i++ {
		iperf2.PutDatagram(b, iperf2.LayoutModern, i, time.Now())
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			time.Sleep(time.Millisecond) // stay well inside the socket buffers
		}
	}
	time.Sleep(100 * time.Millisecond) // past MaxHold: the held ones are out
	stop()
	var rep lab.Report
	select {
	case rep = <-done:
	case <-time.After(guard):
		t.Fatal("reflector did not stop")
	}
	seq := stats.NewSeqTracker(1)
	corrupt := 0
	rb := make([]byte, 2048)
	for {
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		k, err := c.Read(rb)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		id, _, _, _ := iperf2.ParseDatagram(rb[:k], iperf2.LayoutModern, false)
		seq.Add(id)
		if rb[k-1] != 0 {
			corrupt++
		}
	}
	d := rep.Data
	lost := n - seq.Received()
	t.Logf("reflector %+v; back: %d distinct, %d out of order, %d duplicates, %d corrupt", d, seq.Received(), seq.OutOfOrder(), seq.Duplicates(), corrupt)
	if d.In != n || lost != d.Dropped || seq.OutOfOrder() != d.Reordered || seq.Duplicates() != d.Duplicated || int64(corrupt) != d.Corrupted {
		t.Errorf("sent %d, lost %d, out of order %d, duplicates %d, corrupt %d; reflector %+v",
			n, lost, seq.OutOfOrder(), seq.Duplicates(), corrupt, d)
	}
	if d.Dropped == 0 || d.Reordered == 0 || d.Duplicated == 0 || d.Corrupted == 0 {
		t.Errorf("the model did too little to test: %+v", d)
	}
}

// TestRelayBothToReflector chains a relay with --both and delay=10ms in
// front of a reflector: a datagram comes back unchanged after at least
// 20 ms, and both directions count it.
func TestRelayBothToReflector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	f := startPlainReflector(ctx, t)
	rr := startRelay(t, int(f.Addr().Port()), "delay=10ms", func(c *lab.RelayConfig) { c.Both = true })
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(rr.r.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := []byte("wirebench relay --both")
	sent := time.Now()
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(guard))
	b := make([]byte, 100)
	k, err := c.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	rtt := time.Since(sent)
	rep := rr.stop(t)
	if string(b[:k]) != string(msg) || rtt < 20*time.Millisecond {
		t.Errorf("got %q after %v, want %q after 20 ms or more", b[:k], rtt, msg)
	}
	if rep.Datagrams.Forwarded != 1 || rep.Reverse == nil || rep.Reverse.Forwarded != 1 || rep.Flows != 1 {
		t.Errorf("relay counts: forward %+v, reverse %+v, %d flows", rep.Datagrams, rep.Reverse, rep.Flows)
	}
}

// TestRelayIdleFlow: a client source silent for the idle time loses its
// upstream socket, and its next datagram opens a new one.
func TestRelayIdleFlow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	f := startPlainReflector(ctx, t)
	rr := startRelay(t, int(f.Addr().Port()), "", func(c *lab.RelayConfig) { c.IdleFlow = 200 * time.Millisecond })
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(rr.r.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := make([]byte, 100)
	for i := range 2 {
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(guard))
		if _, err := c.Read(b); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		time.Sleep(600 * time.Millisecond) // well past the idle time and a reaping pass
	}
	if rep := rr.stop(t); rep.Flows != 2 || rep.Reverse.Forwarded != 2 {
		t.Errorf("%d upstream sockets opened, %d replies; want 2 and 2", rep.Flows, rep.Reverse.Forwarded)
	}
}

// startPlainReflector runs a reflector without a model on loopback until
// the test ends.
func startPlainReflector(ctx context.Context, t *testing.T) *lab.Reflector {
	t.Helper()
	f, err := lab.NewReflector(ctx, "127.0.0.1:0", model.Spec{}, "")
	if err != nil {
		t.Fatal(err)
	}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _, _ = f.Run(fctx) }()
	t.Cleanup(func() { stop(); <-done })
	return f
}
