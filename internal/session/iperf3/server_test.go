package iperf3

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/resultcheck"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/testutil/iperf3peer"
	"github.com/wirebench/wirebench/internal/testutil/mixedserver"
	"github.com/wirebench/wirebench/internal/units"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// i3TestServer is an in-process server answering iperf2 and iperf3 (on
// the iperf2 port and on an ephemeral port of iperf3's own), under the
// names these tests use.
type i3TestServer struct {
	*mixedserver.Server
	srv          *session.Server
	port, i3port int
}

func startI3Server(t *testing.T, cfg session.ServerConfig, i3 Config) *i3TestServer {
	t.Helper()
	if i3.Port == 0 {
		i3.Port = -1
	}
	ms := mixedserver.Start(t, cfg, iperf2.Listen, func(ctx context.Context, s *session.Server) (int, error) {
		return Enable(ctx, s, i3)
	})
	return &i3TestServer{Server: ms, srv: ms.Srv, port: ms.Port, i3port: ms.I3Port}
}

func (ts *i3TestServer) stop()                              { ts.Stop() }
func (ts *i3TestServer) count() int                         { return ts.Count() }
func (ts *i3TestServer) waitResults(n int) []*result.Result { return ts.WaitResults(n) }

func runIperf3Client(t *testing.T, port int, args ...string) (*i3wire.Report, string) {
	return iperf3peer.RunClient(t, port, args...)
}

var wrapRe = iperf3peer.WrapRe

func slicesContain(s []string, v string) bool { return slices.Contains(s, v) }

// TestIperf3RealClientsAgainstOurServer: the real iperf3 3.12 client, in
// each mode, against our server on its iperf3 port and on the iperf2 port:
// the figures of its -J report are our server's counts, and, run again
// without -J, its text ends with "iperf Done.". Each case has a server of
// its own, so that the cases can run side by side.
func TestIperf3RealClientsAgainstOurServer(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		onIperf bool // on the iperf2 port instead of our iperf3 port
		udp     bool
		human   bool // run again without -J: the text must end with "iperf Done."
	}{
		{"tcp", []string{"-t", "1"}, false, false, false},
		{"udp 1M 200B", []string{"-u", "-b", "1M", "-l", "200", "-t", "1"}, false, true, true},
		{"udp 64-bit", []string{"-u", "-b", "1M", "-l", "200", "-t", "1", "--udp-counters-64bit"}, false, true, false},
		{"tcp -R", []string{"-t", "1", "-R"}, false, false, true},
		{"udp -R", []string{"-u", "-b", "2M", "-l", "400", "-t", "1", "-R"}, false, true, false},
		{"tcp --bidir -P 2", []string{"-t", "1", "--bidir", "-P", "2"}, false, false, false},
		{"udp --bidir -P 2", []string{"-u", "-b", "1M", "-l", "300", "-t", "1", "--bidir", "-P", "2"}, false, true, true},
		{"tcp --get-server-output", []string{"-t", "1", "--get-server-output"}, false, false, true},
		{"tcp on the iperf2 port", []string{"-t", "1"}, true, false, false},
		{"udp on the iperf2 port", []string{"-u", "-b", "1M", "-l", "200", "-t", "1"}, true, true, false},
		{"udp -R on the iperf2 port", []string{"-u", "-b", "1M", "-l", "200", "-t", "1", "-R"}, true, true, true},
	}
	var runs []protocolCase
	for _, tc := range cases {
		runs = append(runs, protocolCase{tc.name, tc.udp, func(t *testing.T) {
			ts := startI3Server(t, session.ServerConfig{}, Config{})
			port := ts.i3port
			if tc.onIperf {
				port = ts.port
			}
			rep, _ := runIperf3Client(t, port, append(tc.args, "-J")...)
			r := ts.waitResults(1)[0]
			if r.Error != "" {
				t.Fatalf("server result error: %s", r.Error)
			}
			checkRealClient(t, tc.args, tc.udp, rep, r)
			if !tc.human {
				return
			}
			_, text := runIperf3Client(t, port, tc.args...) // the human form ends with "iperf Done."
			ts.waitResults(2)
			if slicesContain(tc.args, "--get-server-output") && !strings.Contains(text, "Server output:") {
				t.Errorf("no server output in:\n%s", text)
			}
		}})
	}
	runByProtocol(t, true, runs)
}

// checkRealClient compares the real client's -J figures with our server's
// result.
func checkRealClient(t *testing.T, args []string, udp bool, rep *i3wire.Report, r *result.Result) {
	t.Helper()
	if rep.End.SumReceived == nil || rep.End.SumSent == nil {
		t.Fatalf("no sums in the client's -J: %+v", rep.End)
	}
	reverse, bidir := slicesContain(args, "-R"), slicesContain(args, "--bidir")
	switch {
	case bidir:
		if r.Receiver == nil || r.Reverse == nil || r.Reverse.Sender == nil {
			t.Fatalf("bidir result: %+v", r)
		}
		if got := rep.End.SumReceived.Bytes; got != r.Receiver.Bytes {
			t.Errorf("client's sum_received %d, our count %d", got, r.Receiver.Bytes)
		}
		if rep.End.SumReceivedBidirReverse == nil || rep.End.SumReceivedBidirReverse.Bytes == 0 {
			t.Errorf("client received nothing in the reverse direction")
		}
	case reverse:
		if r.Sender == nil || r.Receiver == nil {
			t.Fatalf("reverse result: sender %+v receiver %+v", r.Sender, r.Receiver)
		}
		if rep.End.SumSent.Bytes != r.Sender.Bytes {
			t.Errorf("client's sum_sent (our sending) %d, our count %d", rep.End.SumSent.Bytes, r.Sender.Bytes)
		}
		if rep.End.SumReceived.Bytes != r.Receiver.Bytes || r.Receiver.Source != "peer-report" {
			t.Errorf("client's sum_received %d, our peer-report %+v", rep.End.SumReceived.Bytes, r.Receiver)
		}
	default:
		if r.Receiver == nil {
			t.Fatal("no receiver")
		}
		if got := rep.End.SumReceived.Bytes; got != r.Receiver.Bytes || got == 0 {
			t.Errorf("client's sum_received %d, our count %d", got, r.Receiver.Bytes)
		}
		if got := rep.End.SumSent.Bytes; got != r.Receiver.Bytes {
			t.Errorf("client sent %d, we received %d", got, r.Receiver.Bytes)
		}
	}
	if udp && !reverse && r.Receiver != nil && r.Receiver.Lost != 0 {
		t.Errorf("UDP lost %d of %d", r.Receiver.Lost, r.Receiver.Total)
	}
}

// TestIperf3FourClientsAtOnce runs four real iperf3 clients against one
// server at the same time.
func TestIperf3FourClientsAtOnce(t *testing.T) {
	ts := startI3Server(t, session.ServerConfig{}, Config{})
	args := [][]string{
		{"-t", "1", "-J"},
		{"-u", "-b", "1M", "-l", "200", "-t", "1", "-J"},
		{"-t", "1", "-R", "-J"},
		{"-t", "1", "-P", "2", "-J"},
	}
	reps := runIperf3ClientsAtOnce(t, ts.i3port, args)
	rs := ts.waitResults(len(args))
	// Match each client to its server result by the client's control port.
	for i, rep := range reps {
		if rep == nil || len(rep.Start.Connected) == 0 {
			t.Fatalf("client %d: no report", i)
		}
		// Each test's server result carries the counts its client printed.
		var r *result.Result
		for _, x := range rs {
			if x.Receiver != nil && x.Receiver.Bytes == rep.End.SumReceived.Bytes {
				r = x
			}
		}
		if r == nil {
			t.Fatalf("client %d: no server result with its counts (sum_received %d)", i, rep.End.SumReceived.Bytes)
		}
		checkRealClient(t, args[i], slicesContain(args[i], "-u"), rep, r)
	}
}

// TestIperf3OurClientOurServer checks the wirebench extension: per-interval
// receiver counts and duplicates reach our client.
func TestIperf3OurClientOurServer(t *testing.T) {
	ts := startI3Server(t, session.ServerConfig{}, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	for _, cfg := range []session.ClientConfig{
		{UDP: true, Rate: units.Rate{Value: 2e6}, Length: 500, Duration: time.Second, Interval: 250 * time.Millisecond},
		{Duration: time.Second, Bidir: true},
	} {
		cfg.Host, cfg.Port, cfg.Dialect = "127.0.0.1", ts.i3port, session.DialectIperf3
		r, rep, err := RunClient(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Error != "" || r.Receiver == nil || r.Sender == nil {
			t.Fatalf("result %+v", r)
		}
		// Our server reads all that our client wrote. The client's TCP
		// figure is what was acknowledged when its brief wait after the
		// last write ended (TEST_END must follow the data at once): on a
		// loaded machine the last acknowledgements may still be on the
		// way, and the client must then say so.
		if sent := resultcheck.SentTCP(t, r, r.Sender); r.Receiver.Bytes != sent {
			t.Errorf("server received %d, we sent %d (sender %+v)", r.Receiver.Bytes, sent, *r.Sender)
		}
		if cfg.UDP && (r.Receiver.Lost != 0 || r.Receiver.Total != r.Sender.Packets) {
			t.Errorf("lost %d of %d", r.Receiver.Lost, r.Receiver.Total)
		}
		if rep == nil {
			t.Fatal("no -J report")
		}
	}
}

// TestIperf3UDPTestsFromOneHostTakeTurns: a UDP connect message carries no
// cookie, so a second UDP test from the same address waits to take
// streams until the first has all of its own; a TCP test does not wait.
func TestIperf3UDPTestsFromOneHostTakeTurns(t *testing.T) {
	h := &i3Hub{}
	peer := netip.MustParseAddrPort("127.0.0.1:40000")
	udp := &i3wire.Params{Protocol: i3wire.ProtoUDP, Parallel: 1}
	first := &i3Test{hub: h, peer: peer, ready: make(chan struct{})}
	second := &i3Test{hub: h, peer: netip.MustParseAddrPort("127.0.0.1:40001"), ready: make(chan struct{})}
	other := &i3Test{hub: h, peer: netip.MustParseAddrPort("127.0.0.2:40000"), ready: make(chan struct{})}
	tcp := &i3Test{hub: h, peer: peer, ready: make(chan struct{})}
	h.order = []*i3Test{first, second, other, tcp}
	ctx := context.Background()
	if err := h.startAccepting(ctx, first, udp); err != nil {
		t.Fatal(err)
	}
	// Another host's UDP test and this host's TCP test go ahead at once.
	if err := h.startAccepting(ctx, other, udp); err != nil {
		t.Fatal(err)
	}
	if err := h.startAccepting(ctx, tcp, &i3wire.Params{Protocol: i3wire.ProtoTCP, Parallel: 1}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.startAccepting(ctx, second, udp) }()
	select {
	case err := <-done:
		t.Fatalf("the second UDP test from one host did not wait for the first: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	h.mu.Lock()
	if got := h.pendingUDPLocked(peer.Addr()); got != first {
		t.Errorf("a stream from the host would go to %p, want the first test %p", got, first)
	}
	first.addStreamLocked(&i3SrvStream{}) // the first test has its one stream
	h.mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second UDP test still waits after the first took all its streams")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if got := h.pendingUDPLocked(peer.Addr()); got != second {
		t.Errorf("a stream from the host would go to %p, want the second test %p", got, second)
	}
}

// TestIperf3UDPClientsAtOnceFromOneHost: three real iperf3 UDP clients from
// 127.0.0.1 started together; each test's streams are its own, so each
// server result holds exactly its client's datagrams.
func TestIperf3UDPClientsAtOnceFromOneHost(t *testing.T) {
	ts := startI3Server(t, session.ServerConfig{}, Config{})
	args := [][]string{
		{"-u", "-b", "1M", "-l", "200", "-t", "1", "-J"},
		{"-u", "-b", "2M", "-l", "300", "-t", "1", "-J"},
		{"-u", "-b", "3M", "-l", "400", "-t", "1", "-J"},
	}
	reps := runIperf3ClientsAtOnce(t, ts.i3port, args)
	rs := ts.waitResults(len(args))
	for i, rep := range reps {
		if rep == nil {
			t.Fatalf("client %d: no report", i)
		}
		var r *result.Result
		for _, x := range rs {
			if x.Receiver != nil && x.Receiver.Bytes == rep.End.SumReceived.Bytes && x.Test.Length == 200+100*i {
				r = x
			}
		}
		if r == nil {
			t.Fatalf("client %d (%v): no server result with its %d bytes", i, args[i], rep.End.SumReceived.Bytes)
		}
		checkRealClient(t, args[i], true, rep, r)
	}
}

// runIperf3ClientsAtOnce starts one real iperf3 client per argument list
// against port, all together, and returns their -J reports (nil for a
// client that gave none).
func runIperf3ClientsAtOnce(t *testing.T, port int, args [][]string) []*i3wire.Report {
	t.Helper()
	// Skipped here, on the test's goroutine: a skip in a client's
	// goroutine would end only that goroutine, and the test would wait
	// for results that never come.
	iperf3peer.Bin(t)
	reps := make([]*i3wire.Report, len(args))
	var wg sync.WaitGroup
	for i, a := range args {
		wg.Add(1)
		go func() { defer wg.Done(); reps[i], _ = runIperf3Client(t, port, a...) }()
	}
	wg.Wait()
	return reps
}
