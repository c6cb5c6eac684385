package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

func TestProbeRefusesTargetsOutsideAllow(t *testing.T) {
	ran := false
	run := func(context.Context, session.ClientConfig) (*result.Result, error) {
		ran = true
		return result.New("client"), nil
	}
	fakeDNS := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "device.lab" {
			return []netip.Addr{netip.MustParseAddr("192.0.2.7")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	tests := []struct {
		allow  []netip.Prefix
		query  string
		status int
		want   string
	}{
		{nil, "target=127.0.0.1", http.StatusForbidden, "allows no probe targets (start it with --probe-allow CIDR)"},
		{[]netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, "target=127.0.0.1:5001", http.StatusForbidden, "[127.0.0.1] is outside --probe-allow (198.18.0.0/15)"},
		{[]netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, "target=device.lab", http.StatusForbidden, "probe of device.lab refused: [192.0.2.7] is outside --probe-allow"},
		{[]netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, "target=[::ffff:127.0.0.1]:5001", http.StatusForbidden, "outside --probe-allow"},
		{[]netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, "", http.StatusBadRequest, "missing target"},
		{[]netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, "target=nowhere.lab", http.StatusBadRequest, "resolving it: no such host"},
		{[]netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, "target=198.18.0.2&duration=60", http.StatusBadRequest, "at most 10"},
		{[]netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, "target=198.18.0.2&rate=5G", http.StatusBadRequest, "above this server's probe limit"},
		{[]netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, "target=198.18.0.2&proto=sctp", http.StatusBadRequest, "want udp or tcp"},
		{[]netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, "target=198.18.0.2:0", http.StatusBadRequest, "invalid port"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			s := New(Config{Probe: ProbeConfig{Allow: tt.allow, Run: run, Resolve: fakeDNS}})
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/probe?"+tt.query, nil))
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
				t.Fatalf("%d %q, want %d and %q", rec.Code, rec.Body.String(), tt.status, tt.want)
			}
			if ran {
				t.Fatal("a refused probe ran a test")
			}
		})
	}
}

// An allowed probe runs a real bounded test against a wirebench server on
// loopback and returns its figures as metrics.
func TestProbeRunsAllowedTarget(t *testing.T) {
	target := startTestServer(t, Config{}, 0)
	prober := startTestServer(t, Config{Probe: ProbeConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}, 0)
	q := url.Values{"target": {fmt.Sprintf("127.0.0.1:%d", target.port)}, "duration": {"0.5"}, "rate": {"2M"}}
	fams := parseMetrics(t, prober.url+"/probe?"+q.Encode())
	r := target.next(t)
	for _, c := range []struct {
		name string
		want float64
	}{
		{"probe_success", 1},
		{"wirebench_probe_received_bytes", float64(r.Receiver.Bytes)},
		{"wirebench_probe_lost_datagrams", float64(r.Receiver.Lost)},
	} {
		if got, ok := value(fams, c.name); !ok || got != c.want {
			t.Errorf("%s = %v (present %v), want %v (the target's own count)", c.name, got, ok, c.want)
		}
	}
	if d, _ := value(fams, "probe_duration_seconds"); d < 0.5 {
		t.Errorf("probe_duration_seconds %v for a 0.5 s test", d)
	}
	var runs []RunSummary
	getJSON(t, prober.url+"/api/runs?label=source=probe", &runs)
	if len(runs) != 1 {
		t.Fatalf("probe runs kept: %+v", runs)
	}
}

func TestProbeConcurrencyBound(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	run := func(ctx context.Context, _ session.ClientConfig) (*result.Result, error) {
		started <- struct{}{}
		<-release
		return result.New("client"), nil
	}
	s := New(Config{Probe: ProbeConfig{Allow: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, Run: run, MaxConcurrent: 1}})
	h := s.Handler()
	first := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/probe?target=198.18.0.2", nil))
		first <- rec.Code
	}()
	<-started
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/probe?target=198.18.0.2", nil))
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "too many probes running") {
		t.Fatalf("second probe while one runs: %d %q", rec.Code, rec.Body.String())
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Fatalf("first probe: %d", code)
	}
}

// FuzzProbeQuery: no query makes /probe panic, and none gets a test run
// against an address outside the allowed network.
func FuzzProbeQuery(f *testing.F) {
	for _, s := range []string{"target=198.18.0.2", "target=127.0.0.1:5001&proto=tcp", "target=[::1]:1&duration=1e308",
		"target=198.18.0.2&rate=8000pps&length=65507", "target=x&port=-1", "target=198.18.0.2&dialect=iperf3&duration=NaN"} {
		f.Add(s)
	}
	allow := netip.MustParsePrefix("198.18.0.0/15")
	f.Fuzz(func(t *testing.T, query string) {
		run := func(_ context.Context, cfg session.ClientConfig) (*result.Result, error) {
			a, err := netip.ParseAddr(cfg.Host)
			if err != nil || !allow.Contains(a) {
				t.Fatalf("query %q ran a test against %q", query, cfg.Host)
			}
			if cfg.Duration <= 0 || cfg.Duration > DefaultProbeMaxDuration {
				t.Fatalf("query %q ran a test of %v", query, cfg.Duration)
			}
			return result.New("client"), nil
		}
		fakeDNS := func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("198.18.0.9")}, nil
		}
		s := New(Config{Probe: ProbeConfig{Allow: []netip.Prefix{allow}, Run: run, Resolve: fakeDNS}})
		req := httptest.NewRequest("GET", "/probe", nil)
		req.URL.RawQuery = query
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Body.Len() == 0 {
			t.Fatalf("query %q: status %d with no reason", query, rec.Code)
		}
	})
}

// A probe with dialect=iperf3 against the real iperf3 3.12 server: the
// figures are the ones iperf3 reported.
func TestProbeRealIperf3(t *testing.T) {
	bin, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("iperf3 is not installed: apt-get install iperf3")
	}
	port := loopback.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "-s", "-1", "-B", "127.0.0.1", "-p", strconv.Itoa(port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = srv.Wait() }()
	s := New(Config{Probe: ProbeConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	q := url.Values{"target": {fmt.Sprintf("127.0.0.1:%d", port)}, "dialect": {"iperf3"}, "rate": {"4M"}, "duration": {"1"}}
	var fams map[string]*dto.MetricFamily
	for try := 0; ; try++ { // iperf3 may still be starting
		code, body := get(t, hs.URL+"/probe?"+q.Encode())
		if code != http.StatusOK {
			t.Fatalf("probe: %d %s", code, body)
		}
		fams = parseMetricsText(t, body)
		if ok, _ := value(fams, "probe_success"); ok == 1 || try == 20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ok, _ := value(fams, "probe_success"); ok != 1 {
		t.Fatalf("probe_success %v", ok)
	}
	sent, _ := value(fams, "wirebench_probe_sent_bytes")
	recv, ok := value(fams, "wirebench_probe_received_bytes")
	if !ok || recv <= 0 || recv > sent {
		t.Fatalf("iperf3 reported %v bytes received of %v sent", recv, sent)
	}
	if _, ok := value(fams, "wirebench_probe_lost_ratio"); !ok {
		t.Fatal("no loss figure from iperf3's report")
	}
}
