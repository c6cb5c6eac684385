package lab_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/pacer"
	"github.com/wirebench/wirebench/internal/udpio"
)

// BenchmarkRelayNoModel offers the relay (no model) 64-byte datagrams at
// 100,000/s on loopback, b.N of them, and reports how many reached the far
// end (lost), what the relay counted and whether its socket dropped any.
// Run it with a fixed count, e.g. -benchtime=300000x (3 s).
func BenchmarkRelayNoModel(b *testing.B) {
	const pps, size, batch = 100_000, 64, 10
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(b.N/pps+30)*time.Second)
	defer cancel()
	sink, err := udpio.Listen(ctx, "udp", "127.0.0.1:0", udpio.Options{ReadBuffer: 8 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	var got atomic.Int64
	go func() {
		msgs := make([]udpio.Message, 64)
		for i := range msgs {
			msgs[i].Buf = make([]byte, 2048)
		}
		for {
			n, err := sink.ReadBatch(msgs)
			got.Add(int64(n))
			if err != nil && ctx.Err() != nil {
				return
			}
		}
	}()
	r, err := lab.NewRelay(ctx, lab.RelayConfig{Listen: "127.0.0.1:0", To: sink.LocalAddr().String()})
	if err != nil {
		b.Fatal(err)
	}
	relayCtx, stopRelay := context.WithCancel(ctx)
	done := make(chan lab.Report, 1)
	go func() { rep, _ := r.Run(relayCtx); done <- rep }()
	src, err := udpio.Dial(ctx, "udp", r.Addr().String(), "", udpio.Options{WriteBuffer: 4 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	msgs := make([]udpio.Message, batch)
	for i := range msgs {
		msgs[i].Buf = make([]byte, size)
	}
	var clock pacer.SystemClock
	b.ResetTimer()
	start := time.Now()
	sent := 0
	for sent < b.N {
		k := min(batch, b.N-sent)
		n, err := src.WriteBatch(msgs[:k])
		if err != nil {
			b.Fatal(err)
		}
		sent += n
		due := time.Duration(float64(sent) / pps * float64(time.Second))
		_ = clock.Sleep(ctx, due-time.Since(start))
	}
	elapsed := time.Since(start)
	for last := int64(-1); got.Load() != last && got.Load() < int64(sent); {
		last = got.Load()
		time.Sleep(100 * time.Millisecond)
	}
	b.StopTimer()
	stopRelay()
	rep := <-done
	b.ReportMetric(float64(sent)/elapsed.Seconds(), "offered/s")
	b.ReportMetric(float64(int64(sent)-got.Load()), "lost")
	b.ReportMetric(float64(rep.Datagrams.In), "relay_in")
	b.ReportMetric(float64(rep.Datagrams.Forwarded), "relay_fwd")
	if len(rep.Warnings) > 0 {
		b.Logf("relay warnings: %q", rep.Warnings)
	}
}
