package session_test

import (
	"context"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3"
)

// init links the dialect packages into this package's tests (see
// dialects_test.go): a test binary may import them from here, though
// package session itself may not.
func init() {
	session.LinkDialectsForTest(dialect.RunClient, dialect.Prepare, iperf3.RunClient,
		func(ctx context.Context, s *session.Server, port int, maxRate float64) (int, error) {
			return iperf3.Enable(ctx, s, iperf3.Config{Port: port, MaxRate: maxRate})
		})
}
