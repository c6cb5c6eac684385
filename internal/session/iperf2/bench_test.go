package iperf2_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/units"
)

// BenchmarkUDPReceive measures how many datagrams per second our server
// takes in over loopback, for 64- and 1470-byte datagrams, fed by our own
// client asking for 2,000,000 datagrams/s (more than it can send here, so
// it sends as fast as it can). One op is one datagram sent. Custom metrics,
// from the server's and the client's results of the test:
//
//	rx-pps    datagrams our server received per second (its Receiver)
//	tx-pps    datagrams our client sent per second
//	loss-%    share of the sent datagrams the server never counted
//	host-drops datagrams the server socket's receive buffer dropped
//
// Client and server share this process and, on a small machine, its CPUs;
// bench/run.sh runs them as separate processes and compares with iperf.
func BenchmarkUDPReceive(b *testing.B) {
	for _, size := range []int{64, 1470} {
		b.Run(fmt.Sprintf("len=%d", size), func(b *testing.B) { benchUDPReceive(b, size) })
	}
}

func benchUDPReceive(b *testing.B, size int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	results := make(chan *result.Result, 1)
	srv, err := iperf2.Listen(ctx, session.ServerConfig{
		Bind: "127.0.0.1", Port: -1,
		OnResult: func(_ int, r *result.Result) { results <- r },
	})
	if err != nil {
		b.Fatalf("starting our server: %v", err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			b.Errorf("server: %v", err)
		}
	}()

	b.ResetTimer()
	cr, err := dialect.RunClient(ctx, session.ClientConfig{
		Host: "127.0.0.1", Port: srv.Port(), UDP: true, Length: size,
		Rate:  units.Rate{Value: 2e6, PPS: true},
		Bytes: int64(b.N) * int64(size), Duration: time.Minute, // whichever comes first
	})
	b.StopTimer()
	if err != nil {
		b.Fatalf("running our client: %v", err)
	}
	var sr *result.Result
	select {
	case sr = <-results:
	case <-time.After(15 * time.Second):
		b.Fatalf("our server produced no result")
	}
	if sr.Receiver == nil || cr.Sender == nil {
		b.Fatalf("incomplete results: server %+v, client %+v", sr.Receiver, cr.Sender)
	}
	b.ReportMetric(sr.Receiver.PacketsPerSecond, "rx-pps")
	b.ReportMetric(cr.Sender.PacketsPerSecond, "tx-pps")
	if cr.Sender.Packets > 0 {
		b.ReportMetric(100*float64(cr.Sender.Packets-sr.Receiver.Packets)/float64(cr.Sender.Packets), "loss-%")
	}
	b.ReportMetric(float64(max(sr.Receiver.HostDrops, 0)), "host-drops")
}
