package iperf2

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	i3session "github.com/wirebench/wirebench/internal/session/iperf3"
)

// Some tests here run iperf3 beside iperf2 through one server. They cannot
// import internal/dialect (which imports this package), so they pick the
// runner of a config's dialect themselves.

// runClient runs a client test in cfg's dialect: iperf3's, or this
// package's.
func runClient(ctx context.Context, cfg session.ClientConfig) (*result.Result, error) {
	if cfg.Dialect == session.DialectIperf3 {
		return i3session.Run(ctx, cfg)
	}
	return RunClient(ctx, cfg)
}

// Iperf3Config is iperf3's server configuration.
type Iperf3Config = i3session.Config

// enableIperf3 makes s answer iperf3 too (iperf3.Enable).
func enableIperf3(ctx context.Context, s *session.Server, cfg Iperf3Config) (int, error) {
	return i3session.Enable(ctx, s, cfg)
}

// runShort runs a client test that must succeed.
func runShort(t *testing.T, cfg session.ClientConfig) *result.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := runClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != "" {
		t.Fatalf("test failed: %s", r.Error)
	}
	return r
}
