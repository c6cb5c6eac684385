package echo

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// startServer runs a wirebench server with the echo service on an
// ephemeral loopback port; results of iperf2 tests go to the returned
// function.
func startServer(t *testing.T) (port int, echo *Server, results func() []*result.Result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var rs []*result.Result
	srv, err := iperf2.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1,
		OnResult: func(_ int, r *result.Result) { mu.Lock(); rs = append(rs, r); mu.Unlock() },
		OnLog:    func(m string) { t.Logf("server: %s", m) }})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	echo = Register(srv, ServerConfig{OnLog: func(m string) { t.Logf("echo: %s", m) }})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return srv.Port(), echo, func() []*result.Result { mu.Lock(); defer mu.Unlock(); return append([]*result.Result(nil), rs...) }
}

func TestLoopbackLatency(t *testing.T) {
	port, srv, results := startServer(t)
	tests := []struct {
		proto string
		size  int
	}{
		{ProtoUDP, 0},
		{ProtoUDP, 1472},
		{ProtoTCP, 0},
		{ProtoTCP, 20000},
		{ProtoConnect, 0},
	}
	var answered int64
	for _, tt := range tests {
		t.Run(tt.proto, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := Run(ctx, Config{Host: "127.0.0.1", Port: port, Proto: tt.proto, Count: 200, Size: tt.size})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if r.Error != "" || r.Sent != 200 || r.Received != 200 || r.Timeouts != 0 || r.Late != 0 || r.Errors != 0 || r.LossPct != 0 {
				t.Fatalf("result %+v", r)
			}
			s := r.RTT
			if s.Count != 200 || s.Min <= 0 || !(s.Min <= s.P50 && s.P50 <= s.P90 && s.P90 <= s.P99 && s.P99 <= s.P999 && s.P999 <= s.Max) ||
				s.Mean < s.Min || s.Mean > s.Max || s.StdDev < 0 || r.RequestsPerSecond <= 0 {
				t.Errorf("distribution out of order: %+v", s)
			}
			if r.Test.Peer == "" || r.Schema != Schema {
				t.Errorf("peer %q schema %q", r.Test.Peer, r.Schema)
			}
			if tt.proto != ProtoConnect {
				answered += 200
			}
			t.Logf("%s size %d: p50 %.3f ms p99 %.3f ms, %.0f req/s", tt.proto, r.Test.Size, s.P50, s.P99, r.RequestsPerSecond)
		})
	}
	if srv.Requests() != answered {
		t.Errorf("server answered %d requests, want %d", srv.Requests(), answered)
	}
	if rs := results(); len(rs) != 0 {
		t.Errorf("echo traffic made %d iperf2 results, e.g. %+v", len(rs), rs[0].Test)
	}
}

// TestLoopbackIperfStillWorks runs an iperf2 UDP and TCP test against the
// same server: the echo protocol must not take them.
func TestLoopbackIperfStillWorks(t *testing.T) {
	port, srv, results := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, udp := range []bool{true, false} {
		r, err := dialect.RunClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: port, UDP: udp, Duration: 300 * time.Millisecond})
		if err != nil || r.Error != "" {
			t.Fatalf("iperf2 client (udp %v): %v %+v", udp, err, r)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(results()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(results()); n != 2 || srv.Requests() != 0 {
		t.Errorf("%d iperf2 results on the server, echo requests %d; want 2 and 0", n, srv.Requests())
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no host", Config{}, "no host"},
		{"proto", Config{Host: "127.0.0.1", Proto: "sctp"}, `unknown protocol "sctp"`},
		{"small", Config{Host: "127.0.0.1", Size: 10}, "message size 10 out of range 24-65507 for udp"},
		{"big udp", Config{Host: "127.0.0.1", Size: 65508}, "out of range"},
		{"port", Config{Host: "127.0.0.1", Port: 70000}, "port 70000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Run(context.Background(), tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestNoServer checks that a closed port gives counted failures, never a
// hang: UDP sees ICMP port unreachable, connect sees a refusal.
func TestNoServer(t *testing.T) {
	port := loopback.FreePort(t)
	for _, proto := range []string{ProtoUDP, ProtoConnect} {
		t.Run(proto, func(t *testing.T) {
			r, err := Run(context.Background(), Config{Host: "127.0.0.1", Port: port, Proto: proto, Count: 3, Timeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if r.Received != 0 || r.Sent != 3 || r.Error == "" || r.LossPct != 100 {
				t.Errorf("result %+v", r)
			}
		})
	}
}

func TestLoopbackUnderLoad(t *testing.T) {
	port, _, _ := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var tr *result.Result
	r, err := UnderLoad(ctx, LoadProbeConfig{Host: "127.0.0.1", Port: port, Idle: 200 * time.Millisecond}, func(ctx context.Context) {
		var err error
		tr, err = dialect.RunClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: port, Duration: 500 * time.Millisecond})
		if err != nil {
			t.Errorf("load: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("UnderLoad: %v", err)
	}
	if tr == nil || tr.Error != "" {
		t.Fatalf("load result %+v", tr)
	}
	for name, st := range map[string]result.RTTStats{"idle": r.Idle, "loaded": r.Loaded} {
		if st.Received == 0 || st.RTT.Count != st.Received || st.Sent < st.Received || st.Errors != 0 {
			t.Errorf("%s: %+v", name, st)
		}
	}
	if r.Error != "" || r.Probe.Proto != ProtoUDP || r.Probe.Peer == "" {
		t.Errorf("result %+v", r)
	}
	t.Logf("idle p50 %.3f ms (%d), loaded p50 %.3f ms (%d)", r.Idle.RTT.P50, r.Idle.Received, r.Loaded.RTT.P50, r.Loaded.Received)
}

func TestUnderLoadNoEcho(t *testing.T) {
	// A UDP socket that never answers: the idle phase finds no echo
	// service and the load does not run.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ran := false
	_, err = UnderLoad(context.Background(), LoadProbeConfig{Host: "127.0.0.1", Port: pc.LocalAddr().(*net.UDPAddr).Port,
		Idle: 50 * time.Millisecond, Interval: 10 * time.Millisecond, Timeout: 20 * time.Millisecond}, func(context.Context) { ran = true })
	if err == nil || ran || !strings.Contains(err.Error(), "no reply") {
		t.Errorf("error %v, load ran %v; want a no-reply error and no load", err, ran)
	}
}
