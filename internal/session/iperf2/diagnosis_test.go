package iperf2

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// startDiagServer runs a loopback server and returns its port and a channel
// of finished results.
func startDiagServer(t *testing.T) (int, <-chan *result.Result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan *result.Result, 8)
	srv, err := Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, IdleTimeout: time.Second,
		OnResult: func(_ int, r *result.Result) { results <- r }})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Port(), results
}

func waitResult(t *testing.T, results <-chan *result.Result) *result.Result {
	t.Helper()
	select {
	case r := <-results:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no result from the server within 10 s")
		return nil
	}
}

// TestDiagnosisQuietOnSmoothStream paces 7000 datagrams/s evenly and
// expects no diagnosis.
func TestDiagnosisQuietOnSmoothStream(t *testing.T) {
	port, results := startDiagServer(t)
	cr, err := runClient(context.Background(), session.ClientConfig{Host: "127.0.0.1", Port: port, UDP: true,
		Rate: units.Rate{Value: 7000, PPS: true}, Duration: 1500 * time.Millisecond, Length: 1470})
	if err != nil {
		t.Fatal(err)
	}
	r := waitResult(t, results)
	if len(r.Diagnoses) != 0 {
		t.Fatalf("diagnosis on a smooth stream (client sent %d): %q", cr.Sender.Packets, r.Diagnoses)
	}
}
