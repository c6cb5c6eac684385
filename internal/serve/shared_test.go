package serve

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/udpio"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// dropConn is a server socket without a socket: the test hands the server
// its datagrams, writes go nowhere, and its drop counter is the test's to
// raise (the kernel's SO_RXQ_OVFL count, as a full receive buffer would).
type dropConn struct {
	drops atomic.Uint64
}

func (c *dropConn) ReadBatch([]udpio.Message) (int, error)       { return 0, net.ErrClosed }
func (c *dropConn) WriteBatch(msgs []udpio.Message) (int, error) { return len(msgs), nil }
func (c *dropConn) SetReadDeadline(time.Time) error              { return nil }
func (c *dropConn) LocalAddr() netip.AddrPort                    { return netip.MustParseAddrPort("127.0.0.1:5001") }
func (c *dropConn) RemoteAddr() netip.AddrPort                   { return netip.AddrPort{} }
func (c *dropConn) Drops() (uint64, bool)                        { return c.drops.Load(), true }
func (c *dropConn) Capabilities() udpio.Capabilities             { return udpio.Capabilities{} }
func (c *dropConn) Close() error                                 { return nil }

// datagram is an iperf 2.1 UDP datagram of test id's stream (a negative id
// is its FIN).
func datagram(id int64) []byte {
	h := i2wire.NewClientHeader(true, 1, 5001)
	h.Amount = i2wire.AmountForDuration(time.Second)
	b := make([]byte, 16, 200)
	b = h.AppendUDPTo(b)
	b = b[:cap(b)]
	i2wire.PutDatagram(b, i2wire.LayoutModern, id, time.Now())
	return b
}

// runSharedDrops runs n UDP tests at once on one server whose socket drops
// datagrams during every test, printing them through p as serve.Run
// does (its printer's hooks, each result printed as it ends, the printer
// closed last), and returns their results.
func runSharedDrops(t *testing.T, n int, p *Printer) map[int]*result.Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := session.ServerConfig{MaxTests: n + 1, MaxDuration: time.Second, MaxTestsPerSource: -1, NewTestsPerSecondPerSource: -1}
	p.Hook(&cfg)
	var mu sync.Mutex
	results := map[int]*result.Result{}
	cfg.OnResult = func(id int, r *result.Result) {
		p.Print(id, r)
		mu.Lock()
		results[id] = r
		mu.Unlock()
	}
	fc := &dropConn{}
	ss := session.NewTestServer(ctx, cfg, nil, fc, 5001)
	iperf2.Enable(ss)
	feed := func(i int, id int64) {
		b := datagram(id)
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(40000+i))
		ss.FeedDatagram(ctx, &udpio.Message{Buf: b, N: len(b), Addr: src, Time: time.Now(), Arrived: time.Now()})
	}
	for i := range n { // every test starts: they share the socket
		feed(i, 1)
	}
	for i := range n {
		fc.drops.Add(3) // the socket overflows while they run
		feed(i, 2)
		feed(i, 4) // id 3 lost
	}
	for i := range n {
		feed(i, -5)
	}
	ss.WaitTests()
	p.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(results) != n {
		t.Fatalf("%d of %d tests ended", len(results), n)
	}
	return results
}

// TestSharedDropsSaidOncePerCause: 40 UDP tests at once on a server whose
// socket dropped datagrams during all of them printed two warnings each
// (80 lines: the socket's drops, "some may be theirs", and the CPU limit
// those drops set off). The text says each cause once when it first
// appears, with what to do, and its count once at the end (all within one
// period); each test's document keeps its warning.
func TestSharedDropsSaidOncePerCause(t *testing.T) {
	const n = 40
	var out bytes.Buffer
	results := runSharedDrops(t, n, NewPrinter(&out, Text, 0, false))
	text := out.String()
	var drops, cpu []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "WARNING") {
			continue
		}
		switch {
		case strings.Contains(line, "server socket dropped") || strings.Contains(line, "dropped by this server's UDP socket"):
			drops = append(drops, line)
		case strings.Contains(line, "CPU was the limit") || strings.Contains(line, "CPU as their limit"):
			cpu = append(cpu, line)
		default:
			t.Errorf("a warning of no shared cause: %s", line)
		}
	}
	if len(drops) != 2 || !strings.HasPrefix(drops[0], "WARNING: server: test ") || !strings.Contains(drops[0], "our server socket dropped 120 datagrams") ||
		!strings.Contains(drops[0], "give the server more CPU") ||
		!strings.HasPrefix(drops[1], fmt.Sprintf("WARNING: server: %d more tests had datagrams dropped by this server's UDP socket", n-1)) ||
		!strings.Contains(drops[1], fmt.Sprintf("%d in all since it was first said", n)) {
		t.Errorf("the socket's drops, said in %d lines, want its first test's and the count at the end:\n%s", len(drops), strings.Join(drops, "\n"))
	}
	// The CPU figure of tests microseconds long is whatever the process
	// did then: the limit may or may not be said, but at most twice.
	if len(cpu) > 2 || len(cpu) > 0 && !strings.HasPrefix(cpu[0], "WARNING: server: test ") {
		t.Errorf("the CPU limit said in %d lines:\n%s", len(cpu), strings.Join(cpu, "\n"))
	}
	if got := strings.Count(text, "120 datagrams dropped by this host's socket receive buffer"); got != n {
		t.Errorf("%d tests' tables show their host drops, want %d", got, n)
	}
	for id, r := range results {
		if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "may be theirs") }) {
			t.Errorf("test %d's document lost its warning: %q", id, r.Warnings)
		}
	}
}

// TestSharedDropsJSON: with --json, stdout carries each test's document,
// warning and all; the causes' lines go to the log (stderr), said once
// and counted once.
func TestSharedDropsJSON(t *testing.T) {
	const n = 10
	var out bytes.Buffer
	var logs []string
	p := NewPrinter(&out, JSON, 0, false)
	p.logf = func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
	runSharedDrops(t, n, p)
	if got := strings.Count(out.String(), "may be theirs"); got != n {
		t.Errorf("%d documents carry the drops warning, want %d", got, n)
	}
	if strings.Contains(out.String(), "WARNING: server") {
		t.Errorf("a cause line among the documents on stdout")
	}
	var drops int
	for _, l := range logs {
		if strings.Contains(l, "server socket dropped") || strings.Contains(l, "dropped by this server's UDP socket") {
			drops++
		}
	}
	if drops != 2 {
		t.Errorf("the drops said %d times in the log, want 2 (first, count):\n%s", drops, strings.Join(logs, "\n"))
	}
}
