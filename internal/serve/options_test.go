package serve

import (
	"strings"
	"testing"
	"time"
)

// TestOptionsServerConfig: the server's options become its configuration
// (seconds as durations, "0 = no limit" as the session's -1, port 0 as
// "any free port"), and each mistake names its flag.
func TestOptionsServerConfig(t *testing.T) {
	o := Options{Port: 0, Interval: 0.5, IdleTimeout: 5, MaxDuration: 60, MaxTests: 8, MaxRate: "100M",
		AllowReverse: []string{"198.18.0.0/15"}, MaxPerSource: 0, MaxNewPerSecond: 2.5}
	cfg, err := o.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != -1 || cfg.Interval != 500*time.Millisecond || cfg.IdleTimeout != 5*time.Second || cfg.MaxDuration != time.Minute ||
		cfg.MaxTests != 8 || cfg.MaxSendRate != 100e6 || len(cfg.AllowReverse) != 1 || cfg.MaxTestsPerSource != -1 || cfg.NewTestsPerSecondPerSource != 2.5 {
		t.Errorf("got %+v", cfg)
	}
	for rate, want := range map[string]float64{"": 0, "0": -1, "10G": 10e9} { // "": the session's default
		if cfg, err := (Options{MaxRate: rate}).ServerConfig(); err != nil || cfg.MaxSendRate != want {
			t.Errorf("--max-rate %q: MaxSendRate %v (%v), want %v", rate, cfg.MaxSendRate, err, want)
		}
	}
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{MaxRate: "-1M"}, "invalid --max-rate"},
		{Options{Interval: -1}, "invalid --interval"},
		{Options{MaxDuration: 1e12}, "invalid --max-duration"},
		{Options{AllowReverse: []string{"x"}}, "invalid --allow-reverse"},
		{Options{DenyReverse: []string{"10.0.0.0/99"}}, "invalid --deny-reverse"},
		{Options{MaxPerSource: -1}, "invalid --max-tests-per-source"},
		{Options{Port: 65536}, "invalid port"},
		{Options{Iperf3Port: -1}, "invalid --iperf3-port"},
		{Options{MaxRate: "1000pps"}, "invalid --max-rate"},
	} {
		if _, err := tt.o.ServerConfig(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.o, err, tt.want)
		}
	}
}

// TestWebOptions: no address is no dashboard, --probe-allow alone is a
// mistake, and a port alone listens on 127.0.0.1.
func TestWebOptions(t *testing.T) {
	if w, err := (WebOptions{}).Web(); w != nil || err != nil {
		t.Errorf("no --web: %v, %v", w, err)
	}
	if _, err := (WebOptions{ProbeAllow: []string{"10.0.0.0/8"}}).Web(); err == nil || !strings.Contains(err.Error(), "needs --web") {
		t.Errorf("--probe-allow alone: %v", err)
	}
	w, err := WebOptions{Addr: "8080", ProbeAllow: []string{"10.0.0.0/8"}}.Web()
	if err != nil || w.Addr != "127.0.0.1:8080" || len(w.ProbeAllow) != 1 || w.ProbeWords != "allowed to [10.0.0.0/8]" {
		t.Errorf("got %+v, %v", w, err)
	}
}
