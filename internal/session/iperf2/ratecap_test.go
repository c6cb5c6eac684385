package iperf2

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// TestServerCapsReverseRate: a UDP -R test asking for more than MaxSendRate
// is served at MaxSendRate, and the server's result says so.
func TestServerCapsReverseRate(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results := make(chan *result.Result, 4)
	srv, err := Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, MaxSendRate: 1e6,
		OnResult: func(_ int, r *result.Result) { results <- r }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	cr, err := runClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: srv.Port(), UDP: true, Reverse: true,
		Rate: units.Rate{Value: 20e6}, Duration: time.Second, Length: 1000})
	if err != nil {
		t.Fatal(err)
	}
	r := waitResult(t, results)
	if r.Sender == nil || r.Sender.BitsPerSecond > 1.1e6 {
		t.Fatalf("server sent %+v, want at most about 1 Mbit/s", r.Sender)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "--max-rate") {
		t.Errorf("no --max-rate warning: %q", r.Warnings)
	}
	if cr.Receiver == nil || cr.Receiver.Packets == 0 || cr.Receiver.Lost != 0 {
		t.Errorf("client received %+v", cr.Receiver)
	}
}
