package iperf2

import (
	"context"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/iperf3peer"
	"github.com/wirebench/wirebench/internal/testutil/mixedserver"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// Helpers for the tests here that run iperf3 beside iperf2; the server is
// internal/testutil/mixedserver's, shared with internal/session/iperf3's
// tests.

// i3TestServer is an in-process server answering iperf2 and iperf3 (on
// the iperf2 port and on an ephemeral port of iperf3's own), under the
// names these tests use.
type i3TestServer struct {
	*mixedserver.Server
	srv          *session.Server
	port, i3port int
}

func startI3Server(t *testing.T, cfg session.ServerConfig, i3 Iperf3Config) *i3TestServer {
	t.Helper()
	if i3.Port == 0 {
		i3.Port = -1
	}
	ms := mixedserver.Start(t, cfg, Listen, func(ctx context.Context, s *session.Server) (int, error) {
		return enableIperf3(ctx, s, i3)
	})
	return &i3TestServer{Server: ms, srv: ms.Srv, port: ms.Port, i3port: ms.I3Port}
}

func (ts *i3TestServer) stop()                              { ts.Stop() }
func (ts *i3TestServer) count() int                         { return ts.Count() }
func (ts *i3TestServer) waitResults(n int) []*result.Result { return ts.WaitResults(n) }

// The real iperf3's helpers are internal/testutil/iperf3peer's, under the
// names these tests use.

func runIperf3Client(t *testing.T, port int, args ...string) (*iperf3.Report, string) {
	return iperf3peer.RunClient(t, port, args...)
}
func iperf3Bin(t *testing.T) string                              { return iperf3peer.Bin(t) }
func realIperf3Server(t *testing.T) (int, func() *iperf3.Report) { return iperf3peer.Server(t) }
func sumReceivedBytes(rep *iperf3.Report) int64                  { return iperf3peer.SumReceivedBytes(rep) }

// bindGrace is iperf3peer.BindGrace: how long a peer started on a free
// port must keep running to count as the one that took it.
const bindGrace = iperf3peer.BindGrace
