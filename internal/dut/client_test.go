package dut

import (
	"errors"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
)

// TestClientTest: a plain one-stream test by time becomes the device's
// test; what the device shells cannot run is refused as unsupported.
func TestClientTest(t *testing.T) {
	base := session.ClientConfig{Port: 5001, Duration: 2 * time.Second, Length: 1470, UDP: true, Parallel: 1}
	got, err := ClientTest(base, "eth0", "")
	if err != nil || got.Proto != "udp" || got.Port != 5001 || got.Duration != 2*time.Second || got.Length != 1470 || got.Iface != "eth0" {
		t.Fatalf("plain UDP test: %+v, %v", got, err)
	}
	if got, err := ClientTest(session.ClientConfig{Dialect: session.DialectIperf3, Parallel: 1, Duration: time.Second}, "", session.DialectIperf3); err != nil || got.Proto != "tcp" {
		t.Fatalf("iperf3 against zephyr-iperf3: %+v, %v", got, err)
	}
	for name, mod := range map[string]func(*session.ClientConfig){
		"iperf3":   func(c *session.ClientConfig) { c.Dialect = session.DialectIperf3 },
		"reverse":  func(c *session.ClientConfig) { c.Reverse = true },
		"bidir":    func(c *session.ClientConfig) { c.Bidir = true },
		"parallel": func(c *session.ClientConfig) { c.Parallel = 2 },
		"bytes":    func(c *session.ClientConfig) { c.Bytes = 1000 },
	} {
		cfg := base
		mod(&cfg)
		_, err := ClientTest(cfg, "", "")
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			t.Errorf("%s: %v, want an UnsupportedError", name, err)
		}
	}
}
