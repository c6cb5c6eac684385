package iperf3

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
)

// guard bounds every wait in these tests. It is not a timed assertion: a
// test that reaches it has hung, and says so.
const guard = 20 * time.Second

// runClient runs a client test: iperf3's here, an iperf2-family dialect's
// through internal/session/iperf2 (these tests cannot import internal/dialect, which
// imports this package).
func runClient(ctx context.Context, cfg session.ClientConfig) (*result.Result, error) {
	if cfg.Dialect == session.DialectIperf3 {
		return Run(ctx, cfg)
	}
	return iperf2.RunClient(ctx, cfg)
}

// protocolCase is one subtest of a suite that mixes TCP and UDP cases.
type protocolCase struct {
	name string
	udp  bool
	run  func(t *testing.T)
}

// runByProtocol runs the cases as subtests, the TCP cases together first
// ("tcp/…"), then the UDP cases ("udp/…"), together when udpTogether is
// set, else one at a time. Cases that check counts, not speeds, may share
// the machine; but an unpaced TCP case takes all the CPU it gets, and a
// UDP case that asserts no loss must not starve beside it.
func runByProtocol(t *testing.T, udpTogether bool, cases []protocolCase) {
	t.Helper()
	for _, udp := range []bool{false, true} {
		group := "tcp"
		if udp {
			group = "udp"
		}
		t.Run(group, func(t *testing.T) {
			for _, c := range cases {
				if c.udp != udp {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					if !udp || udpTogether {
						t.Parallel()
					}
					c.run(t)
				})
			}
		})
	}
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

// deadlineCtx is a context for a stand-in peer (which insists on a
// deadline), ended with the test.
func deadlineCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}
