package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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
