package labctl

import (
	"strings"
	"testing"
)

func TestUpOptionsConfig(t *testing.T) {
	cfg, medium, err := UpOptions{Net: "198.19.7.0/24", Rate: "100mbit", MTU: 1500}.Config("t")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RateBPS != 100e6 || medium != "" || cfg.Net.String() != "198.19.7.0/24" || !cfg.ShapeBothWays || cfg.Lab != "t" {
		t.Fatalf("config %+v, medium %q", cfg, medium)
	}
	cfg, medium, err = UpOptions{Net: "198.18.0.0/24", Medium: "eth1g", MTU: 1500}.Config("t")
	if err != nil || cfg.RateBPS != 1e9 || medium != "eth1g" || cfg.Burst != 0 {
		t.Fatalf("eth1g: %+v %q %v", cfg, medium, err)
	}
	cfg, _, err = UpOptions{Net: "198.18.0.0/24", Medium: "eth100", MTU: 1500, Burst: 1538}.Config("t")
	if err != nil || cfg.Burst != 1538 {
		t.Fatalf("--burst 1538: %+v %v", cfg, err)
	}
}

// TestWriteUpBucket: lab up says what the bucket does after idle, and
// how to get the other trade.
func TestWriteUpBucket(t *testing.T) {
	st := State{Name: "t", Net: "198.18.0.0/24", Medium: "eth100", RateBPS: 100e6, MTU: 1500,
		Hosts: map[string]Host{"a": {Addr: "198.18.0.1"}, "b": {Addr: "198.18.0.2"}}}
	for burst, want := range map[int]string{
		12500: "bucket 12500 bytes: after idle that much leaves at veth speed",
		1538:  "bucket of one frame: exact after idle, but where timers fire late",
	} {
		st.Burst = burst
		var b strings.Builder
		WriteUp(&b, st)
		if !strings.Contains(b.String(), want) {
			t.Errorf("burst %d: output lacks %q:\n%s", burst, want, b.String())
		}
	}
}

func TestRateText(t *testing.T) {
	for in, want := range map[uint64]string{100e6: "100M", 1e9: "1G", 2_500_000: "2.5M", 64000: "64k", 999: "999", 10e9: "10G"} {
		if got := RateText(in); got != want {
			t.Errorf("RateText(%d) = %q, want %q", in, got, want)
		}
	}
}
