package pscheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// testConfig waits only briefly for a server the test starts itself.
var testConfig = Config{ServerWait: "PT0.1S"}

// runInput is a run method input starting now.
func runInput(participant int, testType, spec string, pdata ...string) string {
	if len(pdata) == 0 {
		pdata = []string{"{}"}
	}
	return fmt.Sprintf(`{"schema":1,"task-uuid":"00000000-0000-0000-0000-000000000000",`+
		`"schedule":{"start":%q,"duration":"PT20S"},"test":{"type":%q,"spec":%s},"participant":%d,"participant-data":[%s]}`,
		time.Now().UTC().Format(time.RFC3339Nano), testType, spec, participant, strings.Join(pdata, ","))
}

// startServer runs an in-process wirebench server on a free loopback
// port; the returned channel gets each test's result.
func startServer(t *testing.T) (int, <-chan *result.Result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan *result.Result, 4)
	srv, err := iperf2.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, OnResult: func(_ int, r *result.Result) { results <- r }})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Port(), results
}

// serverResult waits for the server's result of the test.
func serverResult(t *testing.T, results <-chan *result.Result) *result.Result {
	t.Helper()
	select {
	case r := <-results:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the server reported no test")
		return nil
	}
}

// mustSucceed checks a throughput result against the schema and that it
// succeeded with figures in it.
func mustSucceed(t *testing.T, b []byte) schemaThroughputResult {
	t.Helper()
	r := checkThroughputResult(t, b)
	if !*r.Succeeded {
		t.Fatalf("the run failed:\n%s", b)
	}
	if len(*r.Intervals) == 0 || *r.Summary.Summary.ThroughputBits <= 0 {
		t.Fatalf("no intervals or no throughput:\n%s", b)
	}
	return r
}

func TestRunThroughputSingleEndedUDP(t *testing.T) {
	port, results := startServer(t)
	spec := fmt.Sprintf(`{"schema":2,"dest":"127.0.0.1","single-ended":true,"single-ended-port":%d,"udp":true,"bandwidth":4000000,"duration":"PT1S","interval":"PT0.5S","buffer-length":1000}`, port)
	out := invoke(t, "run", runInput(0, "throughput", spec), testConfig)
	r := mustSucceed(t, out)
	srv := serverResult(t, results)
	sum := r.Summary.Summary
	if sum.Sent == nil || sum.Lost == nil || sum.Jitter == nil || sum.ReceiverThroughputBits == nil {
		t.Fatalf("UDP summary lacks sent, lost, jitter or receiver-throughput-bits:\n%s", out)
	}
	// The lost count is the server's own, passed on unchanged.
	if srv.Receiver == nil || *sum.Lost != srv.Receiver.Lost {
		t.Errorf("lost %d, the server counted %+v", *sum.Lost, srv.Receiver)
	}
	for _, in := range *r.Intervals {
		if in.Summary.Sent == nil || *in.Summary.Sent <= 0 || len(*in.Streams) != 1 {
			t.Errorf("interval without datagrams sent or without its one stream: %+v", in)
		}
		if in.Summary.Retransmits != nil {
			t.Error("a UDP interval carries retransmits")
		}
	}
	if len(*r.Intervals) < 2 {
		t.Errorf("%d intervals of 0.5 s in a 1 s test", len(*r.Intervals))
	}
}

func TestRunThroughputSingleEndedTCP(t *testing.T) {
	port, results := startServer(t)
	spec := fmt.Sprintf(`{"schema":7,"dest":"127.0.0.1","single-ended":true,"single-ended-port":%d,"duration":"PT1S","window-size":262144}`, port)
	out := invoke(t, "run", runInput(0, "throughput", spec), testConfig)
	r := mustSucceed(t, out)
	srv := serverResult(t, results)
	sum := r.Summary.Summary
	if sum.ReceiverThroughputBits == nil || *sum.ReceiverThroughputBits <= 0 {
		t.Errorf("no receiver-throughput-bits though the wirebench server reports it:\n%s", out)
	}
	if sum.Lost != nil || sum.Jitter != nil || sum.Sent != nil {
		t.Errorf("a TCP summary carries UDP figures:\n%s", out)
	}
	if srv.Receiver == nil || srv.Receiver.Bytes <= 0 {
		t.Errorf("the server received nothing: %+v", srv.Receiver)
	}
	if len(*r.Summary.Streams) != 1 {
		t.Errorf("%d summary streams for one stream", len(*r.Summary.Streams))
	}
}

func TestRunThroughputDeviceDialect(t *testing.T) {
	port, results := startServer(t)
	cfg := testConfig
	cfg.Devices = []Device{{Dest: "127.0.0.0/8", Dialect: session.DialectRaw, Port: port}}
	spec := `{"schema":2,"dest":"127.0.0.1","single-ended":true,"udp":true,"bandwidth":2000000,"duration":"PT1S"}`
	out := invoke(t, "run", runInput(0, "throughput", spec), cfg)
	r := mustSucceed(t, out)
	if !strings.Contains(*r.Diags, "dialect raw") || !strings.Contains(*r.Diags, fmt.Sprintf("port %d", port)) {
		t.Errorf("the configured dialect and port were not used: %s", *r.Diags)
	}
	if srv := serverResult(t, results); srv.Test.Dialect != session.DialectRaw {
		t.Errorf("the server saw dialect %q", srv.Test.Dialect)
	}
}

func TestRunThroughputTwoParticipants(t *testing.T) {
	cfg := testConfig
	cfg.ServerPort = loopback.FreePort(t)
	spec := `{"schema":1,"source":"127.0.0.1","dest":"127.0.0.1","duration":"PT1S","udp":true,"bandwidth":3000000}`
	test := `{"type":"throughput","spec":` + spec + `}`
	pd0 := strings.TrimSpace(string(invoke(t, "participant-data", `{"participant":0,"test":`+test+`}`, cfg)))
	pd1 := strings.TrimSpace(string(invoke(t, "participant-data", `{"participant":1,"test":`+test+`}`, cfg)))
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for p := range 2 {
		wg.Add(1)
		go func() { // each participant runs apart, as on two hosts
			defer wg.Done()
			var b bytes.Buffer
			errs[p] = Invoke(context.Background(), "run", strings.NewReader(runInput(p, "throughput", spec, pd0, pd1)), &b, cfg)
			outs[p] = b.Bytes()
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("run: %v, %v", errs[0], errs[1])
	}
	client, server := mustSucceed(t, outs[0]), mustSucceed(t, outs[1])
	if server.Summary.Summary.Lost == nil || client.Summary.Summary.Lost == nil || *server.Summary.Summary.Lost != *client.Summary.Summary.Lost {
		t.Errorf("the client's lost count is not the server's:\nclient %s\nserver %s", outs[0], outs[1])
	}
	merge := fmt.Sprintf(`{"test":%s,"results":[%s,%s]}`, test, outs[0], outs[1])
	merged := invoke(t, "merged-results", merge, cfg)
	m := mustSucceed(t, merged)
	if *m.Summary.Summary.ThroughputBits != *client.Summary.Summary.ThroughputBits {
		t.Errorf("merged throughput %v, participant 0 measured %v", *m.Summary.Summary.ThroughputBits, *client.Summary.Summary.ThroughputBits)
	}
	if !strings.Contains(*m.Diags, "Participant 0:") || !strings.Contains(*m.Diags, "Participant 1:") {
		t.Errorf("merged diags lack a participant's: %s", *m.Diags)
	}
}

func TestRunThroughputLoopbackParallel(t *testing.T) {
	spec := `{"schema":5,"dest":"127.0.0.1","loopback":true,"duration":"PT1S","parallel":2}`
	out := invoke(t, "run", runInput(0, "throughput", spec), testConfig)
	r := mustSucceed(t, out)
	if n := len(*r.Summary.Streams); n != 2 {
		t.Errorf("%d summary streams for parallel 2:\n%s", n, out)
	}
	for _, in := range *r.Intervals {
		if len(*in.Streams) != 0 {
			t.Errorf("interval streams given though wirebench keeps per-stream figures per test only: %+v", in)
		}
	}
}

func TestRunThroughputLoopbackReverse(t *testing.T) {
	spec := `{"schema":5,"dest":"127.0.0.1","loopback":true,"duration":"PT1S","reverse":true,"udp":true,"bandwidth":2000000}`
	out := invoke(t, "run", runInput(0, "throughput", spec), testConfig)
	r := mustSucceed(t, out)
	if !strings.Contains(*r.Diags, "reverse true") {
		t.Errorf("not run reverse: %s", *r.Diags)
	}
	// The client received: its intervals carry what a receiver counts.
	for _, in := range *r.Intervals {
		if in.Summary.Lost == nil || in.Summary.Jitter == nil {
			t.Errorf("a receiver's interval without lost or jitter:\n%s", out)
			break
		}
	}
}

func TestRunThroughputNoServer(t *testing.T) {
	port := loopback.FreePort(t)
	spec := fmt.Sprintf(`{"schema":2,"dest":"127.0.0.1","single-ended":true,"single-ended-port":%d,"duration":"PT1S"}`, port)
	out := invoke(t, "run", runInput(0, "throughput", spec), testConfig)
	r := checkThroughputResult(t, out)
	if *r.Succeeded || r.Error == nil || !strings.Contains(*r.Error, "refused") {
		t.Errorf("a run with no server: %s", out)
	}
}

func TestRunRTT(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the rtt test opens a raw ICMP socket: run as root")
	}
	spec := `{"schema":1,"dest":"127.0.0.1","count":3,"interval":"PT0.2S","length":100,"ttl":16}`
	out := invoke(t, "run", runInput(0, "rtt", spec), Config{})
	r := checkRTTResult(t, out)
	if !strings.Contains(*r.Diags, "ttl 16") {
		t.Errorf("the spec's ttl was not used: %s", *r.Diags)
	}
	if !*r.Succeeded || len(*r.Roundtrips) != 3 || *r.Loss != 0 || *r.Sent != 3 || *r.Received != 3 {
		t.Fatalf("3 pings to 127.0.0.1:\n%s", out)
	}
	for i, rt := range *r.Roundtrips {
		if rt.Seq == nil || *rt.Seq != int64(i+1) || rt.Length == nil || *rt.Length != 108 || rt.RTT == nil || rt.IP == nil || *rt.IP != "127.0.0.1" {
			t.Errorf("roundtrip %d: %+v", i, rt)
		}
	}
	min, _ := ParseDuration(*r.Min)
	mean, _ := ParseDuration(*r.Mean)
	max, _ := ParseDuration(*r.Max)
	if min <= 0 || min > mean || mean > max {
		t.Errorf("min %v, mean %v, max %v", min, mean, max)
	}
	merged := invoke(t, "merged-results", `{"test":{"type":"rtt","spec":`+spec+`},"results":[`+string(out)+`]}`, Config{})
	var a, b map[string]any
	json.Unmarshal(out, &a)
	json.Unmarshal(merged, &b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("merged rtt result differs from the run's:\n%s\n%s", out, merged)
	}
}

func TestSourcePrefixes(t *testing.T) {
	ctx := context.Background()
	got := sourcePrefixes(ctx, ThroughputSpec{SourceNode: "203.0.113.9:443", Source: "192.0.2.1", Reverse: true, UDP: true})
	if len(got) != 1 || got[0].String() != "203.0.113.9/32" {
		t.Errorf("source-node's host %v, want 203.0.113.9/32", got)
	}
	if got := sourcePrefixes(ctx, ThroughputSpec{Source: "2001:db8::1", Reverse: true, UDP: true}); len(got) != 1 || got[0].String() != "2001:db8::1/128" {
		t.Errorf("IPv6 source %v", got)
	}
	if got := sourcePrefixes(ctx, ThroughputSpec{Source: "192.0.2.1", UDP: true}); got != nil {
		t.Errorf("a forward test allows reverse to %v", got)
	}
}
