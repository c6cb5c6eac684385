package session

import (
	"context"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// The iperf3 dialect lives in internal/session/iperf3 and the dialect
// table in internal/dialect, both above this package: its own tests cannot
// import them. link_test.go (package session_test, built into the same
// test binary) fills these in before any test runs, so that the tests here
// that run iperf3 beside iperf2 through one server keep doing so.
var (
	// runClient is dialect.RunClient: a client test in cfg's dialect.
	runClient func(ctx context.Context, cfg ClientConfig) (*result.Result, error)
	// prepare is dialect.Prepare.
	prepare func(cfg ClientConfig) (ClientConfig, error)
	// runOurIperf3Client is iperf3.RunClient, with iperf3's -J document.
	runOurIperf3Client func(ctx context.Context, cfg ClientConfig) (*result.Result, *iperf3.Report, error)
	// enableIperf3 is iperf3.Enable with cfg's fields.
	enableIperf3 func(ctx context.Context, s *Server, cfg Iperf3Config) (int, error)
)

// Iperf3Config is the part of iperf3.Config these tests set.
type Iperf3Config struct {
	// Port is iperf3's own port: 0 none, -1 ephemeral.
	Port int
	// MaxRate caps a test's total rate in bit/s (0 = no cap).
	MaxRate float64
}

// LinkDialectsForTest sets the functions above; link_test.go calls it.
func LinkDialectsForTest(run func(context.Context, ClientConfig) (*result.Result, error),
	prep func(ClientConfig) (ClientConfig, error),
	run3 func(context.Context, ClientConfig) (*result.Result, *iperf3.Report, error),
	enable3 func(ctx context.Context, s *Server, port int, maxRate float64) (int, error)) {
	runClient, prepare, runOurIperf3Client = run, prep, run3
	enableIperf3 = func(ctx context.Context, s *Server, cfg Iperf3Config) (int, error) {
		return enable3(ctx, s, cfg.Port, cfg.MaxRate)
	}
}
