package matrix

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
)

func TestOptionsConfig(t *testing.T) {
	o := Options{Port: session.DefaultIperf3Port, Seconds: 2, Interval: time.Second, Rate: "10M", Length: "1k", Proto: "udp"}
	cfg, notes, err := o.Config("192.0.2.1", nil)
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	b := cfg.Base
	if b.Dialect != session.DialectIperf3 || b.Duration != 2*time.Second || b.Rate.Value != 10e6 || b.Length != 1024 || len(cfg.Protocols) != 1 || cfg.Pause != DefaultPause {
		t.Errorf("config %+v", cfg)
	}
	o = Options{Port: 5001, Seconds: 1, Proto: "both", Dialect: session.DialectIperf2Legacy, DialectGiven: true}
	if cfg, notes, err = o.Config("192.0.2.1", nil); err != nil || len(notes) != 1 || cfg.Protocols != nil || cfg.Base.Dialect != session.DialectIperf2Legacy {
		t.Errorf("defaults: %v %v %+v", err, notes, cfg)
	}
	// No UDP cell runs: nothing to say of iperf's default rate.
	o.Proto = "tcp"
	if _, notes, err = o.Config("192.0.2.1", nil); err != nil || len(notes) != 0 {
		t.Errorf("--proto tcp: %v, notes %q, want none", err, notes)
	}
	for _, bad := range []Options{{Seconds: 0, Proto: "both"}, {Seconds: 1, Proto: "sctp"}, {Seconds: 1, Proto: "both", Rate: "fast"}} {
		if _, _, err := bad.Config("192.0.2.1", nil); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, _, err := (Options{Seconds: 1, Proto: "x"}).Config("h", nil); err == nil || !strings.Contains(err.Error(), "want one of tcp, udp, both") {
		t.Errorf("--proto: %v", err)
	}
}
