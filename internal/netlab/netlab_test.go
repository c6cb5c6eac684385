package netlab

import (
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // substring; "" means valid
	}{
		{"zero", Config{}, ""},
		{"shaped", Config{Name: "udp_1", RateBPS: 100e6, Burst: 3000, Latency: 20 * time.Millisecond}, ""},
		{"bad label", Config{Name: "a-b"}, `name "a-b"`},
		{"long label", Config{Name: strings.Repeat("x", 17)}, "up to 16"},
		{"small mtu", Config{MTU: 67}, "mtu 67"},
		{"big mtu", Config{MTU: 65536}, "mtu 65536"},
		{"negative burst", Config{Burst: -1}, "burst -1"},
		{"negative latency", Config{Latency: -time.Second}, "latency -1s"},
		{"burst below a frame", Config{RateBPS: 1e6, Burst: 1537}, "smaller than one full frame (1538 bytes)"},
		{"burst of one frame", Config{RateBPS: 1e6, Burst: 1538}, ""},
		{"relay only without router", Config{RelayOnly: true}, "RelayOnly needs Router"},
		{"relay only", Config{Router: true, RelayOnly: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestBurstDefault(t *testing.T) {
	tests := []struct {
		cfg  Config
		want int
	}{
		{Config{RateBPS: 1e6}, 3076},              // two 1538-byte frames
		{Config{RateBPS: 100e6}, 12500},           // 1 ms at 100 Mbit/s
		{Config{RateBPS: 1e9}, 125000},            // 1 ms at 1 Gbit/s
		{Config{RateBPS: 10e6, MTU: 9000}, 18076}, // two jumbo frames
		{Config{RateBPS: 1e9, Burst: 5000}, 5000},
	}
	for _, tt := range tests {
		if got := tt.cfg.burst(); got != tt.want {
			t.Errorf("%+v.burst() = %d, want %d", tt.cfg, got, tt.want)
		}
	}
}

func TestTCQdiscArgs(t *testing.T) {
	cfg := Config{RateBPS: 100e6, Burst: 3000, Latency: 20 * time.Millisecond}
	got := strings.Join(cfg.tcQdiscArgs("wbl-1-2-abc-a", "wbl-a"), " ")
	want := "-n wbl-1-2-abc-a qdisc replace dev wbl-a root " +
		"tbf rate 100000000bit burst 3000 latency 20000us peakrate 10000000000bit mtu 1514 overhead 24"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("tc args (-want +got):\n%s", diff)
	}
}

func TestTCFilledCommands(t *testing.T) {
	cfg := Config{RateBPS: 100e6, Latency: 20 * time.Millisecond}
	var got []string
	for _, c := range cfg.tcCommands("ns", "wbl-a") {
		got = append(got, strings.Join(c, " "))
	}
	want := []string{
		"-n ns qdisc replace dev wbl-a root handle 1: htb default 10",
		"-n ns class add dev wbl-a parent 1: classid 1:1 htb rate 100000000bit ceil 100000000bit burst 12500 cburst 12500 overhead 24 quantum 1514",
		"-n ns class add dev wbl-a parent 1:1 classid 1:10 htb rate 8bit ceil 100000000bit burst 1514 cburst 12500 overhead 24 prio 0 quantum 1514",
		"-n ns class add dev wbl-a parent 1:1 classid 1:20 htb rate 8bit ceil 100000000bit burst 1514 cburst 12500 overhead 24 prio 7 quantum 1514",
		// 20 ms of the wire (250,000 bytes) plus the bucket
		"-n ns qdisc add dev wbl-a parent 1:10 handle 10: tbf rate 1000000000000bit burst 65536 limit 262500 peakrate 10000000000000bit mtu 1514",
		"-n ns qdisc add dev wbl-a parent 1:20 handle 20: pfifo limit 64",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("tc commands (-want +got):\n%s", diff)
	}
	cfg.Wire = WireTBF
	if c := cfg.tcCommands("ns", "wbl-a"); len(c) != 1 || c[0][7] != "tbf" {
		t.Fatalf("WireTBF: %q, want one tbf", c)
	}
}

func TestFillFrame(t *testing.T) {
	for _, tt := range []struct {
		rate uint64
		mtu  int
		want int
	}{
		{100e6, 1500, 1226}, // 1250 bytes of wire time, less the 24 the wire adds
		{10e6, 1500, 101},
		{1e6, 1500, 60},    // never under the minimum frame
		{1e9, 1500, 1514},  // never over a full frame
		{1e9, 9000, 9014},  // jumbo
		{10e9, 1500, 1514}, // 10G
	} {
		if got := FillFrame(tt.rate, tt.mtu); got != tt.want {
			t.Errorf("FillFrame(%d, %d) = %d, want %d", tt.rate, tt.mtu, got, tt.want)
		}
	}
}

func TestWireGoodput(t *testing.T) {
	tests := []struct {
		name             string
		rate             uint64
		payload, headers int
		want             float64 // bit/s, to 1 kbit/s
	}{
		{"udp 1470 at 100M", 100e6, 1470, 28, 95.703e6},     // 1470/1536
		{"tcp mss 1448 at 100M", 100e6, 1448, 52, 94.148e6}, // 1448/1538
		{"udp 18 (64-byte frame) at 1G", 1e9, 18, 28, 214.286e6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WireGoodput(tt.rate, tt.payload, tt.headers)
			if math.Abs(got-tt.want) > 1e3 {
				t.Fatalf("WireGoodput = %.0f, want %.0f", got, tt.want)
			}
		})
	}
}

func TestNSNameRoundTrip(t *testing.T) {
	tests := []struct {
		pid   int
		start uint64
		label string
	}{
		{1, 0, ""},
		{4194304, 123456789, "udp_shaping"},
	}
	for _, tt := range tests {
		for _, end := range []string{"a", "b"} {
			name := nsName(tt.pid, tt.start, "0a1b2c", tt.label, end)
			if !strings.HasPrefix(name, Prefix) {
				t.Fatalf("%q lacks prefix %q", name, Prefix)
			}
			pid, start, ok := parseNSName(name)
			if !ok || pid != tt.pid || start != tt.start {
				t.Fatalf("parseNSName(%q) = %d, %d, %v; want %d, %d, true", name, pid, start, ok, tt.pid, tt.start)
			}
		}
	}
}

func TestParseNSNameRejects(t *testing.T) {
	for _, name := range []string{
		"", "wbl-", "blue", "wbl-x-1-ab-a", LabNamespace("wb", "a"), LabNamespace("a_1_2_3", "r"), "wbl-0-1-ab-a", "wbl-12-x-ab-a", "wbl-12-34-a", "wbx-12-34-ab-a",
	} {
		if pid, start, ok := parseNSName(name); ok {
			t.Errorf("parseNSName(%q) = %d, %d, true; want not ok", name, pid, start)
		}
	}
}

func TestValidateNet(t *testing.T) {
	for _, ok := range []string{"198.18.0.0/24", "198.18.0.0/15", "198.19.255.252/30", "198.19.0.0/16"} {
		if err := ValidateNet(netip.MustParsePrefix(ok)); err != nil {
			t.Errorf("ValidateNet(%s): %v", ok, err)
		}
	}
	for _, bad := range []string{"198.16.0.0/14", "198.20.0.0/24", "10.0.0.0/24", "198.18.0.1/24", "198.18.0.0/31", "2001:2::/64"} {
		if err := ValidateNet(netip.MustParsePrefix(bad)); err == nil {
			t.Errorf("ValidateNet(%s) = nil, want an error", bad)
		}
	}
	if err := ValidateNet(netip.Prefix{}); err == nil {
		t.Error("ValidateNet(zero) = nil")
	}
}

func TestHostAddr(t *testing.T) {
	c := Config{Net: netip.MustParsePrefix("198.19.255.252/30")}
	for i, want := range []string{"198.19.255.252/31", "198.19.255.253/31", "198.19.255.254/31", "198.19.255.255/31"} {
		if got := c.hostAddr(i, 31).String(); got != want {
			t.Errorf("hostAddr(%d) = %s, want %s", i, got, want)
		}
	}
	if got := (Config{}).hostAddr(2, 24).String(); got != "198.18.0.2/24" {
		t.Errorf("default net: B is %s", got)
	}
}
