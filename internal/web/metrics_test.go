package web

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
)

// parseMetrics fetches url and parses it with the Prometheus text parser.
func parseMetrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, url)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	return parseMetricsText(t, body)
}

// parseMetricsText parses body with the Prometheus text parser.
func parseMetricsText(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the Prometheus text parser refused: %v\n%s", err, body)
	}
	return fams
}

// value is the value of the sample of family name whose labels are want
// (all of them, k=v pairs); ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for _, kv := range want {
			k, v, _ := strings.Cut(kv, "=")
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func TestMetricsCountAUDPTestExactly(t *testing.T) {
	ts := startTestServer(t, Config{}, 0)
	r := ts.udpTest(t, time.Second, 4e6)
	if r.Receiver == nil || r.Receiver.Bytes == 0 {
		t.Fatalf("the server's result has no received bytes: %+v", r.Receiver)
	}
	fams := parseMetrics(t, ts.url+"/metrics")
	pd := []string{"protocol=udp", "dialect=iperf2"}
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"wirebench_server_received_bytes_total", pd, float64(r.Receiver.Bytes)},
		{"wirebench_server_received_datagrams_total", pd[1:], float64(r.Receiver.Packets)},
		{"wirebench_server_lost_datagrams_total", pd[1:], float64(r.Receiver.Lost)},
		{"wirebench_server_tests_started_total", pd, 1},
		{"wirebench_server_tests_total", append(pd, "outcome="+Outcome(r)), 1},
		{"wirebench_server_active_tests", nil, 0},
		{"wirebench_server_last_test_bits_per_second", pd[:1], r.Receiver.BitsPerSecond},
		{"wirebench_server_last_test_jitter_seconds", pd[:1], r.Receiver.JitterMS / 1e3},
	}
	for _, c := range checks {
		got, ok := value(fams, c.name, c.labels...)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	t.Logf("received bytes %d, datagrams %d, lost %d", r.Receiver.Bytes, r.Receiver.Packets, r.Receiver.Lost)
	// Label sets stay bounded: no port, peer or test id.
	allowed := map[string]bool{"protocol": true, "dialect": true, "outcome": true}
	for name, f := range fams {
		if !strings.HasPrefix(name, "wirebench_") {
			continue
		}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if !allowed[l.GetName()] {
					t.Errorf("%s has label %s=%s", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	if _, ok := value(fams, "go_memstats_heap_alloc_bytes"); !ok {
		t.Error("no Go runtime metrics")
	}
}

func TestMetricsDialectLabelIsBounded(t *testing.T) {
	m := NewMetrics(func() int { return 0 })
	for _, d := range []string{"iperf2", "made-up-1", "made-up-2"} {
		r := udpResult("192.0.2.1:1", 100, 0)
		r.Test.Dialect = d
		m.Started(r)
		m.Finished(r, time.Now())
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "wirebench_server_received_bytes_total" {
			continue
		}
		var got []string
		for _, s := range f.Metric {
			for _, l := range s.Label {
				if l.GetName() == "dialect" {
					got = append(got, fmt.Sprintf("%s=%g", l.GetValue(), s.GetCounter().GetValue()))
				}
			}
		}
		if strings.Join(got, ",") != "iperf2=100,other=200" {
			t.Fatalf("received bytes by dialect: %v, want iperf2=100 and other=200", got)
		}
		return
	}
	t.Fatal("no received bytes metric")
}

// pollMetric reads /metrics until name{labels} equals want, for up to
// 10 s (a UDP echo test ends on the server when its bye is next looked
// at), and returns the last families read.
func pollMetric(t *testing.T, url, name string, want float64, labels ...string) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams := parseMetrics(t, url)
		v, ok := value(fams, name, labels...)
		if ok && v == want {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%v = %v (present %v), want %v within 10 s", name, labels, v, ok, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// One echo test of each kind moves its counter by exactly one, its
// requests by the requests the client had answered, and the last-test
// gauges to its figures; a connect test counts one probe per connection.
func TestMetricsCountEchoTests(t *testing.T) {
	ts := startTestServer(t, Config{}, 0)
	run := func(proto string, count int) *result.Latency {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := echo.Run(ctx, echo.Config{Host: "127.0.0.1", Port: ts.port, Proto: proto, Count: count, Interval: 2 * time.Millisecond, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatalf("echo %s test: %v", proto, err)
		}
		if res.Received != int64(count) || res.Late != 0 {
			t.Fatalf("echo %s test over loopback: %d of %d answered, %d late", proto, res.Received, count, res.Late)
		}
		return res
	}
	url := ts.url + "/metrics"
	for _, tc := range []struct {
		proto string
		count int
	}{{echo.ProtoUDP, 40}, {echo.ProtoTCP, 25}} {
		res := run(tc.proto, tc.count)
		kind := "kind=" + tc.proto
		fams := pollMetric(t, url, "wirebench_server_echo_tests_total", 1, kind, "outcome=ok")
		checks := []struct {
			name string
			want float64
		}{
			{"wirebench_server_echo_requests_total", float64(res.Received)},
			{"wirebench_server_echo_request_bytes_total", float64(res.Received) * float64(echo.DefaultSize)},
			{"wirebench_server_echo_last_test_requests", float64(res.Received)},
		}
		for _, c := range checks {
			if v, ok := value(fams, c.name, kind); !ok || v != c.want {
				t.Errorf("%s{%s} = %v (present %v), want %v", c.name, kind, v, ok, c.want)
			}
		}
		for _, outcome := range []string{"timeout", "error"} {
			if v, ok := value(fams, "wirebench_server_echo_tests_total", kind, "outcome="+outcome); ok && v != 0 {
				t.Errorf("echo_tests_total{%s,outcome=%s} = %v, want 0", kind, outcome, v)
			}
		}
		// The server sees the requests from the first to the last: a
		// little less than the client's whole test, never more.
		if d, _ := value(fams, "wirebench_server_echo_last_test_duration_seconds", kind); d <= 0 || d > res.Seconds+0.5 {
			t.Errorf("%s: server-side duration %.3f s, the client's test took %.3f s", tc.proto, d, res.Seconds)
		}
		if end, _ := value(fams, "wirebench_server_echo_last_test_end_timestamp_seconds", kind); math.Abs(end-float64(time.Now().Unix())) > 30 {
			t.Errorf("%s: end timestamp %.0f is not now", tc.proto, end)
		}
		if tc.proto == echo.ProtoTCP {
			rtt, ok := value(fams, "wirebench_server_echo_last_test_kernel_rtt_seconds", kind)
			if !ok || !(rtt > 0 && rtt < 1) {
				t.Errorf("kernel RTT of the TCP echo connection on loopback = %v (present %v), want between 0 and 1 s", rtt, ok)
			}
			t.Logf("tcp echo: client RTT p50 %.3f ms, p99 %.3f ms; kernel smoothed RTT %.3f ms", res.RTT.P50, res.RTT.P99, 1e3*rtt)
		}
	}
	run(echo.ProtoConnect, 3)
	fams := pollMetric(t, url, "wirebench_server_echo_connect_probes_total", 3)
	// The connect probes are not tests: the counters of the two tests stay.
	for _, kind := range []string{"kind=udp", "kind=tcp"} {
		if v, _ := value(fams, "wirebench_server_echo_tests_total", kind, "outcome=ok"); v != 1 {
			t.Errorf("echo_tests_total{%s,outcome=ok} = %v after the connect probes, want 1", kind, v)
		}
	}
}
