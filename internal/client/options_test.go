package client

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sockopt"
)

// defaults are the client command's flag defaults.
func defaults() Options { return Options{Port: session.DefaultPort, Seconds: 10, Parallel: 1} }

func TestConfig(t *testing.T) {
	o := defaults()
	o.UDP, o.Rate, o.Length, o.Interval, o.Omit, o.Parallel = true, "8000pps", "64", 0.5, 2, 3
	o.Bind, o.Socket, o.IPv6, o.NoGSO = "127.0.0.2:6000", sockopt.Typed{TTL: 9}, true, true
	cfg, err := o.Config("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "127.0.0.1" || !cfg.UDP || cfg.Duration != 10*time.Second || cfg.Interval != 500*time.Millisecond ||
		cfg.Omit != 2*time.Second || cfg.Parallel != 3 || cfg.Length != 64 || !cfg.Rate.PPS || cfg.Rate.Value != 8000 ||
		cfg.BindHost != "127.0.0.2" || cfg.CPort != 6000 || cfg.Socket.TTL != 9 || !cfg.IPv6 || !cfg.NoGSO {
		t.Errorf("Config = %+v", cfg)
	}
	o = defaults()
	o.Num = "10M"
	if cfg, err := o.Config("h"); err != nil || cfg.Bytes != 10<<20 || cfg.Duration != 0 {
		t.Errorf("-n 10M: %+v, %v; want 10 MiB and no duration", cfg, err)
	}
}

func TestConfigRejects(t *testing.T) {
	tests := []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Dialect = "iperf4" }, "invalid --dialect"},
		{func(o *Options) { o.Parallel = 0 }, "invalid -P 0"},
		{func(o *Options) { o.Seconds = 0 }, "invalid duration -t 0"},
		{func(o *Options) { o.Interval = 0.001 }, "invalid interval -i"},
		{func(o *Options) { o.Omit = -1 }, "invalid -O -1"},
		{func(o *Options) { o.Rate = "100M" }, "add -u"},
		{func(o *Options) { o.Num = "0" }, "invalid byte count -n"},
		{func(o *Options) { o.Length = "x" }, "invalid size"},
		{func(o *Options) { o.ListenPort = 5002 }, "-L is the port"},
		{func(o *Options) { o.Socket.MSS = 10 }, "invalid -M 10"},
		{func(o *Options) { o.UDP, o.ZeroCopy = true, true }, "-Z (zero-copy send) is for TCP"},
		{func(o *Options) { o.Bind = "eth0%1" }, "invalid -B"},
		{func(o *Options) { o.Bind, o.CPort = "h:6000", 6001 }, "already names the client port"},
		{func(o *Options) { o.CPort = 70000 }, "invalid --cport 70000"},
	}
	for _, tt := range tests {
		o := defaults()
		tt.change(&o)
		if _, err := o.Config("h"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one saying %q", o, err, tt.want)
		}
	}
}

func TestParseBind(t *testing.T) {
	for in, want := range map[string]struct {
		host string
		port int
	}{"127.0.0.2": {"127.0.0.2", 0}, "127.0.0.2:6000": {"127.0.0.2", 6000}, "fe80::1": {"fe80::1", 0}, "[::1]:6000": {"::1", 6000}, "[::1]": {"::1", 0}} {
		if h, p, err := ParseBind(in); err != nil || h != want.host || p != want.port {
			t.Errorf("ParseBind(%q) = %q, %d, %v; want %q, %d", in, h, p, err, want.host, want.port)
		}
	}
	for _, in := range []string{"", ":6000", "h:x", "h:70000", "[::1]:", "[::1", "eth0%x"} {
		if h, p, err := ParseBind(in); err == nil {
			t.Errorf("ParseBind(%q) = %q, %d; want an error", in, h, p)
		}
	}
}

func TestChooseDialectWithDevice(t *testing.T) {
	cfg := session.ClientConfig{Host: "h", Port: session.DefaultPort, Dialect: probe.DialectAuto}
	_, err := ChooseDialect(t.Context(), cfg, true, true, nil)
	if !session.IsConfigError(err) {
		t.Errorf("--dialect auto with --dut: %v, want a config error", err)
	}
	cfg.Dialect = session.DialectIperf2Legacy
	if c, err := ChooseDialect(t.Context(), cfg, true, true, nil); err != nil || c.Dialect != cfg.Dialect || c.By != probe.ChosenByFlag {
		t.Errorf("--dialect with --dut: %+v, %v; want the flag's", c, err)
	}
	cfg.Dialect = ""
	if c, err := ChooseDialect(t.Context(), cfg, false, true, nil); err != nil || c.Dialect != "" || c.By != probe.ChosenByDevice {
		t.Errorf("--dut alone: %+v, %v; want the device to choose", c, err)
	}
	cfg.Port = session.DefaultIperf3Port
	if c, err := ChooseDialect(t.Context(), cfg, false, true, nil); err != nil || c.Dialect != session.DialectIperf3 || c.By != probe.ChosenByPort {
		t.Errorf("--dut on port 5201: %+v, %v; want iperf3 by port", c, err)
	}
}

func TestNote(t *testing.T) {
	r := &result.Result{Error: "no reply: " + session.Iperf3Hint}
	Note(r, probe.DialectChoice{Dialect: session.DialectIperf2, By: probe.ChosenByProbe, Reason: "acked"}, session.DialectIperf2)
	if r.Test.DialectChosenBy != probe.ChosenByProbe || r.Test.DialectReason != "acked" {
		t.Errorf("choice not noted: %+v", r.Test)
	}
	if strings.Contains(r.Error, session.Iperf3Hint) || !strings.Contains(r.Error, "acked as iperf 2") {
		t.Errorf("error %q still carries the iperf3 hint", r.Error)
	}
}

func TestCheckIperf3(t *testing.T) {
	if err := CheckIperf3(session.ClientConfig{Dialect: session.DialectIperf3}, probe.DialectChoice{}); err != nil {
		t.Errorf("iperf3: %v", err)
	}
	err := CheckIperf3(session.ClientConfig{Dialect: session.DialectIperf2}, probe.DialectChoice{})
	if err == nil || !strings.Contains(err.Error(), "--json-iperf3 needs the iperf3 dialect") {
		t.Errorf("iperf2: %v, want an error", err)
	}
}
