package session

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

func TestCPULimitRule(t *testing.T) {
	tests := []struct {
		name string
		c    cpuLimit
		want bool
	}{
		{"saturated core, short", cpuLimit{Percent: 95, Streams: 1, Cores: 2, Short: true}, true},
		{"saturated core, on target", cpuLimit{Percent: 99, Streams: 1, Cores: 2}, false},
		{"below 90 %, short", cpuLimit{Percent: 89.9, Streams: 1, Cores: 2, Short: true}, false},
		{"exactly 90 %", cpuLimit{Percent: 90, Streams: 1, Cores: 4, Short: true}, true},
		{"two streams need two cores", cpuLimit{Percent: 150, Streams: 2, Cores: 4, Short: true}, false},
		{"two streams, both cores busy", cpuLimit{Percent: 185, Streams: 2, Cores: 4, Short: true}, true},
		{"eight streams, two cores", cpuLimit{Percent: 181, Streams: 8, Cores: 2, Short: true}, true},
		{"no core count", cpuLimit{Percent: 95, Streams: 1, Short: true}, true},
	}
	for _, tt := range tests {
		if got := tt.c.bound(); got != tt.want {
			t.Errorf("%s: bound() = %v, want %v", tt.name, got, tt.want)
		}
		if w := tt.c.warning(); (w != "") != tt.want {
			t.Errorf("%s: warning %q", tt.name, w)
		}
	}
}

func TestCPULimitEvidence(t *testing.T) {
	udpSend := func(bps float64) *result.Result {
		r := &result.Result{Test: result.Test{Protocol: result.UDP, Direction: result.DirSend, Streams: 1, RateBPS: 1e9},
			Sender: &result.Sender{BitsPerSecond: bps, Seconds: 2}, CPU: &result.CPU{Percent: 97}}
		return r
	}
	if c := cpuLimitOf(udpSend(0.90e9), 2); !c.Short || !strings.Contains(c.warning(), "90.0% of the rate") {
		t.Errorf("UDP sender at 90 %% of its rate: %+v %q", c, c.warning())
	}
	if c := cpuLimitOf(udpSend(0.99e9), 2); c.Short {
		t.Errorf("UDP sender on target counted as short: %+v", c)
	}
	rcv := &result.Result{Test: result.Test{Protocol: result.UDP, Direction: result.DirReceive, Streams: 1},
		Receiver: &result.Receiver{Source: "local", HostDrops: 12}, CPU: &result.CPU{Percent: 99}}
	if c := cpuLimitOf(rcv, 2); !c.bound() {
		t.Errorf("UDP receiver dropping at 99 %% CPU: %+v", c)
	}
	rcv.Receiver.HostDrops = 0
	if c := cpuLimitOf(rcv, 2); c.bound() {
		t.Errorf("UDP receiver without loss: %+v", c)
	}
	tcp := &result.Result{Test: result.Test{Protocol: result.TCP, Direction: result.DirBidir, Streams: 1},
		Sender: &result.Sender{Seconds: 1}, CPU: &result.CPU{Percent: 150}}
	if c := cpuLimitOf(tcp, 2); c.Streams != 2 || c.bound() {
		t.Errorf("bidir TCP at 150 %% of 2 cores: %+v", c)
	}
	tcp.Test.Direction = result.DirReceive
	tcp.Sender = nil
	tcp.Receiver = &result.Receiver{Source: "local"}
	if c := cpuLimitOf(tcp, 2); c.bound() {
		t.Errorf("a TCP receiver is not judged: %+v", c)
	}
}

func TestServerCPUOtherTests(t *testing.T) {
	s := &Server{}
	// A group of two streams (2 joins 1) is one test: no overlap.
	s.noteCPU(1)
	s.noteCPU(2)
	s.cpuJoined(2, 1)
	time.Sleep(2 * time.Millisecond)
	r := &result.Result{}
	s.fillTestCPU(1, r)
	if r.CPU != nil && r.CPU.OtherTests != 0 {
		t.Fatalf("a group's own streams counted as other tests: %d", r.CPU.OtherTests)
	}
	// Two tests open at once: both say their CPU figure is shared.
	s.noteCPU(3)
	s.noteCPU(4)
	time.Sleep(2 * time.Millisecond)
	r3, r4 := &result.Result{}, &result.Result{}
	s.fillTestCPU(4, r4)
	s.fillTestCPU(3, r3)
	if r3.CPU != nil && (r3.CPU.OtherTests != 1 || r4.CPU.OtherTests != 1) {
		t.Fatalf("overlapping tests: other_tests %d and %d, want 1 each", r3.CPU.OtherTests, r4.CPU.OtherTests)
	}
	// Alone again.
	s.noteCPU(5)
	time.Sleep(2 * time.Millisecond)
	r5 := &result.Result{}
	s.fillTestCPU(5, r5)
	if r5.CPU != nil && r5.CPU.OtherTests != 0 {
		t.Fatalf("a test alone has other_tests %d", r5.CPU.OtherTests)
	}
	if len(s.cpuAt) != 0 {
		t.Fatalf("samples left: %v", s.cpuAt)
	}
}

// Under GRO the socket's drop counter counts a coalesced packet once, so
// the CPU-limit evidence gives it as a lower bound; per datagram, exact.
func TestCPULimitDropsUnderGRO(t *testing.T) {
	for method, want := range map[string]string{
		result.JitterPerBatch:    "and at least 7 dropped by our socket buffer",
		result.JitterPerDatagram: "and 7 dropped by our socket buffer",
	} {
		r := &result.Result{Test: result.Test{Protocol: result.UDP}, CPU: &result.CPU{Percent: 99},
			Receiver: &result.Receiver{Source: "local", Lost: 9, HostDrops: 7, JitterMethod: method}}
		if got := cpuLimitOf(r, 2).What; !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", method, got, want)
		}
	}
}
