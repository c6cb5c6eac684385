package iperf2

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// The TCP fuzz targets (issue 15) drive the real server code — the
// connection handler, first-word sniffing, iperf2 header reading, the
// iperf3 control conversation and its data streams — over real loopback
// connections, with arbitrary bytes and arbitrary close/reset timing. The
// server's timeouts are milliseconds, so one input costs milliseconds, and
// every goroutine an input starts has ended before the next one.

// tcpRig is one loopback listener for a fuzz process; each input gets a
// fresh Server around it.
type tcpRig struct {
	ln   net.Listener
	sink net.Listener // TCP connect-backs land here
	port int
	base int // goroutines after setup
	wg   sync.WaitGroup
}

func newTCPRig(f *testing.F) *tcpRig {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	r := &tcpRig{ln: ln, sink: sink, port: ln.Addr().(*net.TCPAddr).Port}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := sink.Accept()
			if err != nil {
				return
			}
			r.wg.Add(1)
			go func() { defer r.wg.Done(); _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	f.Cleanup(func() { ln.Close(); sink.Close(); r.wg.Wait() })
	r.base = runtime.NumGoroutine()
	return r
}

// fuzzServer is a server with millisecond timeouts, iperf3 sniffed on its
// port, every connect-back sent to the rig's sink, and the one-result-per-
// test rule checked.
type fuzzServer struct {
	*session.Server
	mu      sync.Mutex
	started int
	ended   map[int]int
}

func (r *tcpRig) server(ctx context.Context) *fuzzServer {
	cfg := session.ServerConfig{HeaderTimeout: 20 * time.Millisecond, IdleTimeout: 50 * time.Millisecond,
		MaxDuration: 20 * time.Millisecond, MaxTests: 4, Interval: 10 * time.Millisecond}
	cfg.MaxTestsPerSource, cfg.NewTestsPerSecondPerSource = -1, -1 // no per-source limits, as the rig's clients share one address
	fs := &fuzzServer{ended: map[int]int{}}
	cfg.OnTestStart = func(int, *result.Result) { fs.mu.Lock(); fs.started++; fs.mu.Unlock() }
	cfg.OnResult = func(id int, res *result.Result) {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if len(res.Streams) == 0 || res.Test.Dialect == session.DialectIperf3 {
			fs.ended[id]++
			return
		}
		for _, st := range res.Streams {
			fs.ended[st.ID]++
		}
	}
	cfg.OnInterval = func(int, result.Interval) {}
	cfg.OnLog = func(msg string) {
		if strings.Contains(msg, "internal error") {
			panic("a recovered panic: " + msg) // a bug all the same: fail the input
		}
	}
	ss := session.NewTestServer(ctx, cfg, r.ln, &fakeConn{}, r.port)
	s := enable(ss)
	s.testJoinWindow = 5 * time.Millisecond
	sinkAddr := r.sink.Addr().String()
	s.testDialBack = func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", sinkAddr)
	}
	if _, err := enableIperf3(ctx, ss, Iperf3Config{}); err != nil {
		panic(err)
	}
	fs.Server = ss
	return fs
}

// conn dials the rig and hands the server's end to s's connection
// handler, as its accept loop does.
func (r *tcpRig) conn(t *testing.T, ctx context.Context, s *fuzzServer) *net.TCPConn {
	c, err := net.Dial("tcp", r.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := r.ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	s.ServeConn(ctx, sc, time.Now())
	return c.(*net.TCPConn)
}

// closeHow is how a fuzz client ends its connection, from its fuzz byte:
// bits 0-1 the way, bits 2-4 how long it holds the connection open first
// (0-14 ms).
type closeHow uint8

// play writes data on c (cut bytes of it when the way is a reset), reads
// whatever the server sends, and ends the connection as how says. It
// returns when the connection is over.
func (h closeHow) play(c *net.TCPConn, data []byte, cut int) {
	hold := time.Duration(h>>2&7) * 2 * time.Millisecond
	read := make(chan struct{})
	go func() {
		defer close(read)
		_ = c.SetReadDeadline(time.Now().Add(guard))
		_, _ = io.Copy(io.Discard, c)
	}()
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	switch h & 3 {
	case 0: // write, half-close, wait for the server to close
		_, _ = c.Write(data)
		time.Sleep(hold)
		_ = c.CloseWrite()
		select {
		case <-read:
		case <-time.After(50 * time.Millisecond):
		}
	case 1: // write part, then reset
		_, _ = c.Write(data[:min(cut, len(data))])
		time.Sleep(hold)
		_ = c.SetLinger(0)
	case 2: // write, close at once
		_, _ = c.Write(data)
	case 3: // write, hold the connection open, close
		_, _ = c.Write(data)
		select {
		case <-read:
		case <-time.After(hold):
		}
	}
	c.Close()
	<-read
}

// finish cancels the input's context, waits for every goroutine the server
// started and checks that each test started ended in exactly one result.
func (r *tcpRig) finish(t *testing.T, cancel context.CancelFunc, s *fuzzServer) {
	cancel()
	done := make(chan struct{})
	go func() { s.WaitTests(); close(done) }()
	select {
	case <-done:
	case <-time.After(guard):
		buf := make([]byte, 1<<20)
		t.Fatalf("the server's goroutines did not end within %v of the client closing:\n%s", guard, buf[:runtime.Stack(buf, true)])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ended) != s.started {
		t.Errorf("%d tests started, %d ended in a result: %v", s.started, len(s.ended), s.ended)
	}
	for id, n := range s.ended {
		if n != 1 {
			t.Errorf("test %d ended in %d results", id, n)
		}
	}
	// Goroutines that outlive an input must not pile up (the interval
	// reporters and the rig's own readers end on their own shortly).
	if n := runtime.NumGoroutine(); n > r.base+64 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after an input, %d at the start:\n%s", n, r.base, buf[:runtime.Stack(buf, true)])
	}
}

// FuzzServerTCPConn feeds arbitrary bytes as one TCP connection's stream
// through the server's connection handler, ending the connection in every
// way (half-close, reset part way, close, hold open then close).
func FuzzServerTCPConn(f *testing.F) {
	hdr := func(mod func(*iperf2.ClientHeader)) []byte {
		h := iperf2.NewClientHeader(false, 1, 5001)
		h.Amount = iperf2.AmountForDuration(20 * time.Millisecond)
		mod(&h)
		return append(h.AppendTo(nil), make([]byte, 500)...)
	}
	f.Add(hdr(func(*iperf2.ClientHeader) {}), uint16(30), uint8(0))
	f.Add(hdr(func(h *iperf2.ClientHeader) {
		h.Flags |= iperf2.FlagVersion2
		h.UpperFlags |= iperf2.UpperReverse | iperf2.UpperFullDuplex
	}), uint16(60), uint8(3))
	f.Add(hdr(func(h *iperf2.ClientHeader) { h.Flags |= iperf2.FlagVersion2; h.UpperFlags |= iperf2.UpperReverse }), uint16(0), uint8(8))
	f.Add(hdr(func(h *iperf2.ClientHeader) { h.Flags |= iperf2.FlagVersion1 | iperf2.FlagRunNow }), uint16(70), uint8(2))
	f.Add(hdr(func(h *iperf2.ClientHeader) { h.Flags = iperf2.FlagVersion1 }), uint16(70), uint8(0))
	f.Add(hdr(func(h *iperf2.ClientHeader) { h.NumThreads = 3; h.Flags |= iperf2.FlagV2PeerDetect }), uint16(10), uint8(1))
	f.Add(binary.BigEndian.AppendUint32(nil, iperf2.FlagExtend|iperf2.FlagLenBit|2<<1), uint16(4), uint8(0))
	f.Add(append([]byte("0123456789abcdefghijklmnopqrstuvwxyzA"), 0, 0, 0, 2, '{', '}'), uint16(20), uint8(4))
	f.Add([]byte{0, 0, 0, 0, 1, 2, 3}, uint16(2), uint8(13))
	f.Add([]byte{}, uint16(0), uint8(12))
	rig := newTCPRig(f)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, how uint8) {
		ctx, cancel := context.WithCancel(context.Background())
		s := rig.server(ctx)
		c := rig.conn(t, ctx, s)
		closeHow(how).play(c, data, int(cut))
		rig.finish(t, cancel, s)
	})
}

// FuzzServerIperf3Control speaks iperf3's control protocol with arbitrary
// parts: a cookie (valid, or bytes in its place), a parameter JSON with an
// arbitrary length prefix, arbitrary bytes after it (state bytes, results,
// anything), and up to three data connections with the same cookie,
// carrying arbitrary bytes of their own.
func FuzzServerIperf3Control(f *testing.F) {
	ck := []byte("abcdefghijklmnopqrstuvwxyz2345672345\x00")
	f.Add(ck, []byte(`{"tcp":true,"omit":0,"time":0,"num":0,"blockcount":0,"parallel":1,"len":1000}`), int32(0),
		[]byte{byte(iperf3.TestEnd)}, uint8(1), []byte("data"), uint8(3))
	results := []byte(`{"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":0,"streams":[{"id":1,"bytes":4,"retransmits":0,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":0.01}]}`)
	full := append([]byte{byte(iperf3.TestEnd)}, binary.BigEndian.AppendUint32(nil, uint32(len(results)))...)
	full = append(append(full, results...), byte(iperf3.IperfDone))
	f.Add(ck, []byte(`{"tcp":true,"omit":0,"time":0,"num":0,"blockcount":0,"parallel":1,"len":1000}`), int32(0),
		full, uint8(1), []byte("data"), uint8(0))
	f.Add(ck, []byte(`{"tcp":true,"time":0,"num":5000,"parallel":2,"reverse":true}`), int32(0),
		[]byte{byte(iperf3.TestEnd), 0, 0, 0, 2, '{', '}', byte(iperf3.IperfDone)}, uint8(2), []byte{}, uint8(0))
	f.Add(ck, []byte(`{"udp":true,"time":0,"parallel":1,"bidirectional":true,"len":64,"bandwidth":1000}`), int32(0),
		[]byte{}, uint8(0), []byte{}, uint8(4))
	f.Add(ck, []byte(`{"tcp":true,"parallel":128,"wb_version":1,"wb_interval_ms":1}`), int32(-3), []byte{}, uint8(3), []byte{1}, uint8(2))
	f.Add(ck[:10], []byte(`{}`), int32(0x7fffffff), []byte{9, 9}, uint8(0), []byte{}, uint8(1))
	f.Add(ck, []byte(`{"tcp":true,"num":9223372036854775807,"parallel":3}`), int32(0), []byte{byte(iperf3.TestEnd)}, uint8(3), []byte("x"), uint8(0))
	rig := newTCPRig(f)
	f.Fuzz(func(t *testing.T, cookie, params []byte, lenDelta int32, after []byte, streams uint8, data []byte, how uint8) {
		ctx, cancel := context.WithCancel(context.Background())
		s := rig.server(ctx)
		ctl := rig.conn(t, ctx, s)
		// The client goes as far as the server lets it, as iperf3 does:
		// cookie, PARAM_EXCHANGE, parameters, CREATE_STREAMS, streams,
		// TEST_START and TEST_RUNNING, then the rest.
		_ = ctl.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = ctl.Write(cookie)
		state := func() byte {
			var b [1]byte
			_ = ctl.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if n, _ := ctl.Read(b[:]); n == 1 {
				return b[0]
			}
			return 0
		}
		state()
		msg := binary.BigEndian.AppendUint32(nil, uint32(int32(len(params))+lenDelta))
		_, _ = ctl.Write(append(msg, params...))
		var wg sync.WaitGroup
		if state() == byte(iperf3.CreateStreams) {
			for i := range int(streams % 4) {
				// Each data connection opens with the control's cookie (its
				// first 37 bytes, whatever they are).
				d := append(append([]byte(nil), cookie[:min(len(cookie), iperf3.CookieSize)]...), data...)
				c := rig.conn(t, ctx, s)
				wg.Add(1)
				go func() { defer wg.Done(); closeHow(how>>1+uint8(i)).play(c, d, len(d)) }()
			}
			state()
			state()
		}
		closeHow(how).play(ctl, after, len(after)/2)
		wg.Wait()
		rig.finish(t, cancel, s)
	})
}
