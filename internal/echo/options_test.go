package echo

import (
	"strings"
	"testing"
	"time"
)

func TestOptionsConfig(t *testing.T) {
	o := Options{Port: 5001, Proto: ProtoTCP, Count: 100, Interval: 0, Timeout: 0.5, Size: 64}
	cfg, err := o.Config("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Host: "127.0.0.1", Port: 5001, Proto: ProtoTCP, Count: 100, Size: 64, Timeout: 500 * time.Millisecond}
	if cfg.Host != want.Host || cfg.Port != want.Port || cfg.Proto != want.Proto || cfg.Count != want.Count ||
		cfg.Size != want.Size || cfg.Timeout != want.Timeout || cfg.Interval != 0 || cfg.Duration != 0 {
		t.Errorf("Config = %+v, want %+v", cfg, want)
	}
	tests := []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Proto = "icmp" }, `invalid --proto "icmp": want one of udp, tcp, connect`},
		{func(o *Options) { o.Seconds = -1 }, "invalid --time -1"},
		{func(o *Options) { o.Interval = -1 }, "invalid --interval -1"},
		{func(o *Options) { o.Timeout = 0 }, "invalid --timeout 0: want seconds > 0"},
		{func(o *Options) { o.Count = -1 }, "invalid --count -1"},
		{func(o *Options) { o.CountAndTime = true }, "choose one of -c and -t"},
	}
	for _, tt := range tests {
		o := Options{Proto: ProtoUDP, Timeout: 1}
		tt.change(&o)
		if _, err := o.Config("h"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", o, err, tt.want)
		}
	}
}

func TestLoadProbeOptionsConfig(t *testing.T) {
	if c, err := (LoadProbeOptions{Interval: 0.01, Idle: 1}).Config(5001); c != nil || err != nil {
		t.Errorf("no --latency: %+v, %v; want no probe", c, err)
	}
	c, err := LoadProbeOptions{Proto: ProtoICMP, Interval: 0.01, Idle: 1}.Config(5001)
	if err != nil || c.Proto != ProtoICMP || c.Port != 5001 || c.Interval != 10*time.Millisecond || c.Idle != time.Second {
		t.Errorf("--latency icmp: %+v, %v", c, err)
	}
	for _, bad := range []LoadProbeOptions{{Proto: ProtoTCP, Interval: 0.01, Idle: 1}, {Proto: ProtoUDP, Interval: 0.0001, Idle: 1},
		{Proto: ProtoUDP, Interval: 0.5, Idle: 0.1}, {Proto: ProtoUDP, Interval: 0.01, Idle: -1}} {
		if c, err := bad.Config(5001); err == nil {
			t.Errorf("%+v gave %+v, want an error", bad, c)
		}
	}
}
