package lab_test

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// TestRelayTCP runs a wirebench TCP test through relay --tcp with a 20
// Mbit/s rate and 5 ms of delay: the server receives every byte the proxy
// forwarded, at no more than the rate.
func TestRelayTCP(t *testing.T) {
	port, results := startServer(t)
	rr := startRelay(t, port, "rate=20mbit,delay=5ms", func(c *lab.RelayConfig) { c.TCP = true })
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	client, err := dialect.RunClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: int(rr.r.Addr().Port()), Duration: 2 * time.Second})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	var server *result.Result
	select {
	case server = <-results:
	case <-time.After(guard):
		t.Fatal("no server result")
	}
	rep := rr.stop(t)
	if rep.TCP == nil || server.Receiver == nil {
		t.Fatalf("no TCP counts %+v or no receiver %+v", rep.TCP, server.Receiver)
	}
	bps := server.Receiver.BitsPerSecond
	t.Logf("relay tcp %+v; server %d bytes, %.2f Mbit/s; client sent %d", *rep.TCP, server.Receiver.Bytes, bps/1e6, client.Sender.Bytes)
	if rep.TCP.Connections != 1 || rep.TCP.BytesForward != server.Receiver.Bytes {
		t.Errorf("relay forwarded %d bytes on %d connections; the server received %d", rep.TCP.BytesForward, rep.TCP.Connections, server.Receiver.Bytes)
	}
	if bps > 20e6*1.03 || bps < 20e6*0.8 {
		t.Errorf("server measured %.2f Mbit/s through a 20 Mbit/s proxy", bps/1e6)
	}
}
