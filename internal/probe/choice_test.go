package probe

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// TestChooseOnIperfPort: a test to iperf 2's port with no --dialect opens
// exactly one connection, the test's, against a real `iperf -s` (2.1.8): no
// probe, so nothing the user did not ask for, and no pause after one. The
// peer listens on a free port standing in for 5001 (PortDialects maps it
// to iperf2, as DefaultPorts maps 5001), behind a forwarder that counts
// the connections it accepts. The same port without that rule is probed,
// and said so before the probe's connection.
func TestChooseOnIperfPort(t *testing.T) {
	backend := loopback.FreePort(t)
	startPeerProc(t, "iperf", "tcp", backend, "-s", "-p", strconv.Itoa(backend))
	fw := startCountingForwarder(t, backend)
	port := fw.port()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var said []string
	say := func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }
	rule := PortDialects{port: session.DialectIperf2}
	c := rule.Choose(ctx, "127.0.0.1", port, "", false, say)
	if c.Dialect != session.DialectIperf2 || c.By != ChosenByPort || c.Reason != "" || len(said) != 0 {
		t.Fatalf("choice %+v, said %q; want iperf2 chosen by port, nothing said", c, said)
	}
	r, err := dialect.RunClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: port, Dialect: c.Dialect, Duration: 300 * time.Millisecond})
	if err != nil || r.Error != "" {
		t.Fatalf("test on the iperf2 port: %v %+v", err, r)
	}
	if n := fw.accepted(t); n != 1 {
		t.Errorf("%d connections reached the peer, want 1: the test's alone", n)
	}

	c = PortDialects{}.Choose(ctx, "127.0.0.1", port, "", false, say)
	// iperf 2.1.8 now and then leaves a connection that follows a test at
	// once unanswered: the probe then falls back to iperf2, probed all the same.
	if !c.Probed() || c.Dialect != session.DialectIperf2 {
		t.Errorf("off iperf's ports: choice %+v, want iperf2 chosen by probing", c)
	}
	want := fmt.Sprintf("probing 127.0.0.1 port %d for its dialect, one TCP connection (port %d is neither iperf's 5001 nor iperf3's 5201", port, port)
	if len(said) != 1 || !strings.HasPrefix(said[0], want) {
		t.Errorf("said %q before the probe, want one line starting %q", said, want)
	}
	if n := fw.accepted(t); n != 2 {
		t.Errorf("%d connections in all, want 2: the test's, then the probe's", n)
	}
}

// countingForwarder accepts connections on a free loopback port, counts
// them and passes each on to the backend port.
type countingForwarder struct {
	ln      net.Listener
	backend int
	mu      sync.Mutex
	n       int
	marks   map[string]chan int // a marker connection's local address -> the count before it
	wg      sync.WaitGroup
}

func startCountingForwarder(t *testing.T, backend int) *countingForwarder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &countingForwarder{ln: ln, backend: backend, marks: map[string]chan int{}}
	f.wg.Add(1)
	go f.serve()
	t.Cleanup(func() { ln.Close(); f.wg.Wait() })
	return f
}

func (f *countingForwarder) port() int { return f.ln.Addr().(*net.TCPAddr).Port }

func (f *countingForwarder) serve() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		if mark, ok := f.marks[c.RemoteAddr().String()]; ok {
			mark <- f.n
			f.mu.Unlock()
			c.Close()
			continue
		}
		f.n++
		f.mu.Unlock()
		f.wg.Add(1)
		go f.forward(c)
	}
}

func (f *countingForwarder) forward(c net.Conn) {
	defer f.wg.Done()
	defer c.Close()
	b, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(f.backend)))
	if err != nil {
		return
	}
	defer b.Close()
	done := make(chan struct{})
	go func() { io.Copy(b, c); b.(*net.TCPConn).CloseWrite(); close(done) }()
	io.Copy(c, b)
	c.Close()
	<-done
}

// accepted is the number of connections made to the forwarder so far: it
// makes a marker connection of its own and returns the count the accept
// loop had reached when it took the marker, which comes after every
// connection made before it (accept takes them in order).
func (f *countingForwarder) accepted(t *testing.T) int {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second}
	// The marker's local address must be known before the accept loop
	// sees it: bind it first.
	laddr, err := net.ResolveTCPAddr("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(loopback.FreePort(t))))
	if err != nil {
		t.Fatal(err)
	}
	d.LocalAddr = laddr
	mark := make(chan int, 1)
	f.mu.Lock()
	f.marks[laddr.String()] = mark
	f.mu.Unlock()
	c, err := d.Dial("tcp", f.ln.Addr().String())
	if err != nil {
		t.Fatalf("marker connection: %v", err)
	}
	defer c.Close()
	select {
	case n := <-mark:
		return n
	case <-time.After(30 * time.Second):
		t.Fatal("the forwarder did not take the marker connection in 30 s")
	}
	return 0
}
