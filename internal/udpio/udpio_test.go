package udpio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// safety bounds every blocking read in tests; it is never asserted on.
const safety = 5 * time.Second

type family struct {
	name     string
	network  string // of the receiving socket
	listen   string
	target   string // host the sender aims at
	senderNw string
}

func families() []family {
	return []family{
		{"ipv4", "udp4", "127.0.0.1:0", "127.0.0.1", "udp4"},
		{"ipv6", "udp6", "[::1]:0", "::1", "udp6"},
		{"dualstack", "udp", ":0", "127.0.0.1", "udp4"},
	}
}

// hasIPv6Loopback reports whether ::1 can be bound.
func hasIPv6Loopback() bool {
	c, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func listen(t *testing.T, network, addr string, opt Options) Conn {
	t.Helper()
	c, err := Listen(context.Background(), network, addr, opt)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func dial(t *testing.T, network, raddr string, opt Options) Conn {
	t.Helper()
	c, err := Dial(context.Background(), network, raddr, "", opt)
	if err != nil {
		t.Fatalf("dial %s %s: %v", network, raddr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// targetOf is where a sender reaches c.
func targetOf(f family, c Conn) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr(f.target), c.LocalAddr().Port())
}

// readN reads exactly n datagrams (bufSize bytes each), failing the test on
// any error.
func readN(t *testing.T, c Conn, n, bufSize int) []Message {
	t.Helper()
	return readIn(t, c, n, n, bufSize)
}

// readIn reads n datagrams, at most per per call, with bufSize buffers.
func readIn(t *testing.T, c Conn, n, per, bufSize int) []Message {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(safety)); err != nil {
		t.Fatal(err)
	}
	var got []Message
	for len(got) < n {
		msgs := make([]Message, min(per, n-len(got)))
		for i := range msgs {
			msgs[i].Buf = make([]byte, bufSize)
		}
		k, err := c.ReadBatch(msgs)
		if err != nil {
			t.Fatalf("read after %d of %d datagrams: %v", len(got), n, err)
		}
		got = append(got, msgs[:k]...)
	}
	return got
}

func payloads(n int, tag string) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i].Buf = fmt.Appendf(nil, "%s-%03d-%s", tag, i, bytes.Repeat([]byte{'x'}, i))
	}
	return msgs
}

func TestRoundTrip(t *testing.T) {
	v6 := hasIPv6Loopback()
	for _, f := range families() {
		for _, noBatch := range []bool{false, true} {
			for _, connected := range []bool{false, true} {
				name := fmt.Sprintf("%s/nobatch=%v/connected=%v", f.name, noBatch, connected)
				t.Run(name, func(t *testing.T) {
					if f.network != "udp4" && !v6 {
						t.Skip("no IPv6 loopback (::1) on this host")
					}
					roundTrip(t, f, Options{NoBatch: noBatch, BatchSize: 8}, connected)
				})
			}
		}
	}
}

// roundTrip sends 20 datagrams from a client to a server (more than one
// batch) and echoes them back to the source address the server saw.
func roundTrip(t *testing.T, f family, opt Options, connected bool) {
	srv := listen(t, f.network, f.listen, opt)
	to := targetOf(f, srv)
	var cli Conn
	if connected {
		cli = dial(t, f.senderNw, to.String(), opt)
	} else {
		cli = listen(t, f.senderNw, netip.AddrPortFrom(to.Addr(), 0).String(), opt)
	}
	const n = 20
	out := payloads(n, "ping")
	for i := range out {
		if !connected {
			out[i].Addr = to
		}
	}
	if sent, err := cli.WriteBatch(out); sent != n || err != nil {
		t.Fatalf("client WriteBatch = %d, %v; want %d, nil", sent, err, n)
	}
	got := readN(t, srv, n, 2048)
	for i, m := range got {
		if !bytes.Equal(m.Buf[:m.N], out[i].Buf) || m.Truncated {
			t.Fatalf("datagram %d: got %q (truncated %v), want %q", i, m.Buf[:m.N], m.Truncated, out[i].Buf)
		}
		if m.Addr != cli.LocalAddr() {
			t.Fatalf("datagram %d: source %v, want client address %v", i, m.Addr, cli.LocalAddr())
		}
		if m.Time.IsZero() {
			t.Fatalf("datagram %d: zero receive time", i)
		}
	}
	echo := make([]Message, n)
	for i, m := range got {
		echo[i] = Message{Buf: m.Buf[:m.N], Addr: m.Addr}
	}
	if sent, err := srv.WriteBatch(echo); sent != n || err != nil {
		t.Fatalf("server WriteBatch = %d, %v; want %d, nil", sent, err, n)
	}
	back := readN(t, cli, n, 2048)
	for i, m := range back {
		if !bytes.Equal(m.Buf[:m.N], out[i].Buf) {
			t.Fatalf("echo %d: got %q, want %q", i, m.Buf[:m.N], out[i].Buf)
		}
		if m.Addr != to {
			t.Fatalf("echo %d: source %v, want %v", i, m.Addr, to)
		}
	}
}

func TestBatchSizeCapsRead(t *testing.T) {
	srv := listen(t, "udp4", "127.0.0.1:0", Options{BatchSize: 4})
	cli := dial(t, "udp4", srv.LocalAddr().String(), Options{BatchSize: 4})
	if sent, err := cli.WriteBatch(payloads(10, "cap")); sent != 10 || err != nil {
		t.Fatalf("WriteBatch = %d, %v; want 10, nil", sent, err)
	}
	msgs := make([]Message, 10)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 64)
	}
	if err := srv.SetReadDeadline(time.Now().Add(safety)); err != nil {
		t.Fatal(err)
	}
	total := 0
	for total < 10 {
		n, err := srv.ReadBatch(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if n > 4 {
			t.Fatalf("ReadBatch returned %d datagrams, batch size is 4", n)
		}
		total += n
	}
}

func TestTruncation(t *testing.T) {
	for _, noBatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("nobatch=%v", noBatch), func(t *testing.T) {
			opt := Options{NoBatch: noBatch}
			srv := listen(t, "udp4", "127.0.0.1:0", opt)
			cli := dial(t, "udp4", srv.LocalAddr().String(), opt)
			long := bytes.Repeat([]byte("0123456789"), 10)
			out := []Message{{Buf: long}, {Buf: []byte("short")}}
			if _, err := cli.WriteBatch(out); err != nil {
				t.Fatal(err)
			}
			got := readN(t, srv, 2, 10)
			if !got[0].Truncated || got[0].N != 10 || !bytes.Equal(got[0].Buf, long[:10]) {
				t.Errorf("long datagram: N=%d truncated=%v buf=%q; want N=10 truncated=true", got[0].N, got[0].Truncated, got[0].Buf)
			}
			if got[1].Truncated || got[1].N != 5 {
				t.Errorf("short datagram: N=%d truncated=%v; want N=5 truncated=false", got[1].N, got[1].Truncated)
			}
		})
	}
}

func TestReadDeadline(t *testing.T) {
	for _, noBatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("nobatch=%v", noBatch), func(t *testing.T) {
			c := listen(t, "udp4", "127.0.0.1:0", Options{NoBatch: noBatch})
			if err := c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			n, err := c.ReadBatch([]Message{{Buf: make([]byte, 10)}})
			if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("ReadBatch = %d, %v; want 0 and a deadline error", n, err)
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("error %v is not a net.Error timeout", err)
			}
		})
	}
}

func TestCloseUnblocksRead(t *testing.T) {
	for _, noBatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("nobatch=%v", noBatch), func(t *testing.T) {
			c, err := Listen(context.Background(), "udp4", "127.0.0.1:0", Options{NoBatch: noBatch})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.ReadBatch([]Message{{Buf: make([]byte, 10)}})
				done <- err
			}()
			time.Sleep(10 * time.Millisecond) // let the read block; correctness does not depend on it
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, net.ErrClosed) {
					t.Fatalf("ReadBatch after Close: %v; want net.ErrClosed", err)
				}
			case <-time.After(safety):
				t.Fatal("ReadBatch still blocked after Close")
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	srv := listen(t, "udp4", "127.0.0.1:0", Options{})
	other := listen(t, "udp4", "127.0.0.1:0", Options{})
	for _, noBatch := range []bool{false, true} {
		opt := Options{NoBatch: noBatch}
		t.Run(fmt.Sprintf("connected-elsewhere/nobatch=%v", noBatch), func(t *testing.T) {
			cli := dial(t, "udp4", srv.LocalAddr().String(), opt)
			msgs := []Message{{Buf: []byte("a")}, {Buf: []byte("b"), Addr: other.LocalAddr()}}
			n, err := cli.WriteBatch(msgs)
			if n != 1 || !errors.Is(err, errWriteToConnected) {
				t.Fatalf("WriteBatch = %d, %v; want 1 sent and errWriteToConnected", n, err)
			}
			readN(t, srv, 1, 16)
		})
		t.Run(fmt.Sprintf("connected-to-peer/nobatch=%v", noBatch), func(t *testing.T) {
			cli := dial(t, "udp4", srv.LocalAddr().String(), opt)
			if n, err := cli.WriteBatch([]Message{{Buf: []byte("a"), Addr: srv.LocalAddr()}}); n != 1 || err != nil {
				t.Fatalf("WriteBatch to the connected peer = %d, %v; want 1, nil", n, err)
			}
			readN(t, srv, 1, 16)
		})
		t.Run(fmt.Sprintf("unconnected-no-address/nobatch=%v", noBatch), func(t *testing.T) {
			c := listen(t, "udp4", "127.0.0.1:0", opt)
			if n, err := c.WriteBatch([]Message{{Buf: []byte("a")}}); n != 0 || err == nil {
				t.Fatalf("WriteBatch without destination = %d, %v; want 0 and an error", n, err)
			}
		})
	}
}

func TestBadNetwork(t *testing.T) {
	for _, nw := range []string{"tcp", "ip4:icmp", ""} {
		if c, err := Listen(context.Background(), nw, "127.0.0.1:0", Options{}); err == nil {
			c.Close()
			t.Errorf("Listen(%q) succeeded", nw)
		}
	}
}

func TestWrap(t *testing.T) {
	uc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Wrap(uc, Options{})
	if err != nil {
		uc.Close()
		t.Fatal(err)
	}
	defer c.Close()
	if c.LocalAddr() != uc.LocalAddr().(*net.UDPAddr).AddrPort() {
		t.Errorf("LocalAddr = %v, want %v", c.LocalAddr(), uc.LocalAddr())
	}
	if c.RemoteAddr().IsValid() {
		t.Errorf("RemoteAddr of an unconnected socket = %v, want zero", c.RemoteAddr())
	}
	if _, err := Wrap(nil, Options{}); err == nil {
		t.Error("Wrap(nil) succeeded")
	}
}

func TestOptionsBatchSize(t *testing.T) {
	tests := []struct {
		opt  Options
		want int
	}{
		{Options{}, DefaultBatchSize},
		{Options{BatchSize: 7}, 7},
		{Options{BatchSize: -1}, DefaultBatchSize},
		{Options{BatchSize: 1 << 20}, MaxBatchSize},
		{Options{BatchSize: 7, NoBatch: true}, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.opt), func(t *testing.T) {
			if got := tt.opt.batchSize(); got != tt.want {
				t.Errorf("batchSize = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestConcurrentReadWrite uses one Conn from a reader and a writer goroutine
// at once (run with -race): 200 datagrams go to an echo socket and back.
func TestConcurrentReadWrite(t *testing.T) {
	for _, noBatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("nobatch=%v", noBatch), func(t *testing.T) {
			opt := Options{NoBatch: noBatch, BatchSize: 16, ReadBuffer: 1 << 20}
			echo := listen(t, "udp4", "127.0.0.1:0", opt)
			c := dial(t, "udp4", echo.LocalAddr().String(), opt)
			const n = 200
			echoErr := make(chan error, 1)
			go func() { echoErr <- echoN(echo, n) }()
			writeErr := make(chan error, 1)
			go func() {
				for i := 0; i < n; i += 10 {
					if _, err := c.WriteBatch(payloads(10, fmt.Sprint(i))); err != nil {
						writeErr <- err
						return
					}
				}
				writeErr <- nil
			}()
			readN(t, c, n, 64)
			if err := <-writeErr; err != nil {
				t.Fatal(err)
			}
			if err := <-echoErr; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// echoN sends back the first n datagrams c receives.
func echoN(c Conn, n int) error {
	if err := c.SetReadDeadline(time.Now().Add(safety)); err != nil {
		return err
	}
	msgs := make([]Message, 16)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 64)
	}
	for done := 0; done < n; {
		k, err := c.ReadBatch(msgs)
		if err != nil {
			return err
		}
		out := make([]Message, k)
		for i := range out {
			out[i] = Message{Buf: msgs[i].Buf[:msgs[i].N], Addr: msgs[i].Addr}
		}
		if _, err := c.WriteBatch(out); err != nil {
			return err
		}
		done += k
	}
	return nil
}
