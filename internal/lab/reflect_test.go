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
