package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestPingUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no host", []string{"ping"}, "a host is missing"},
		{"bad socket", []string{"ping", "--socket", "magic", "127.0.0.1"}, `invalid --socket "magic"`},
		{"too big", []string{"ping", "-s", "65508", "127.0.0.1"}, "size 65508 is over the largest echo payload, 65507 bytes"},
		{"bad interval", []string{"ping", "-i", "soon", "127.0.0.1"}, "invalid --interval"},
		{"bad medium", []string{"ping", "--medium", "pigeon", "127.0.0.1"}, "invalid --medium"},
		{"source of the other family", []string{"ping", "-I", "::1", "127.0.0.1"}, "-I ::1 and 127.0.0.1 (127.0.0.1) are not the same IP version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), tt.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errb.String(), exitUsage, tt.want)
			}
		})
	}
}

func TestPingLoopbackJSON(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a raw ICMP socket (unprivileged ICMP is off here: ping_group_range)")
	}
	var out, errb bytes.Buffer
	args := []string{"ping", "--json", "-c", "3", "-i", "0.01", "--sizes", "56,65500", "--medium", "eth100", "127.0.0.1"}
	if code := run(context.Background(), args, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Schema, Kind string
		Socket       struct {
			Kind         string
			RxTimestamps string `json:"rx_timestamps"`
			TxTimestamps string `json:"tx_timestamps"`
		}
		Sizes []struct {
			Size, Sent, Received int
			KernelTx             int `json:"rtt_from_kernel_tx"`
		}
		Implied []struct {
			Size       int
			ImpliedBPS float64 `json:"implied_bps"`
			Steps      []string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if doc.Schema != "wirebench/1" || doc.Kind != "ping" || doc.Socket.Kind != "raw" || doc.Socket.RxTimestamps != "kernel" ||
		doc.Socket.TxTimestamps != "kernel" || len(doc.Sizes) != 2 || len(doc.Implied) != 2 {
		t.Fatalf("document %+v", doc)
	}
	for i, s := range doc.Sizes {
		if s.Sent != 3 || s.Received != 3 || s.KernelTx != 3 || doc.Implied[i].ImpliedBPS <= 0 || len(doc.Implied[i].Steps) == 0 {
			t.Errorf("size %d: %+v, implied %+v", s.Size, s, doc.Implied[i])
		}
	}
}

// TestPingExplainText: --explain shows, step by step, why a 65500-byte
// echo cannot come back at the medium's 10 Mbit/s: 45 fragments, each with
// its headers, FCS, preamble and gap, and the count without the gap; no
// output cites a seed report instead of saying what it counts.
func TestPingExplainText(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a raw ICMP socket (unprivileged ICMP is off here: ping_group_range)")
	}
	var out, errb bytes.Buffer
	args := []string{"ping", "-q", "-c", "1", "-s", "65500", "--medium", "eth10", "--mtu", "1500", "--explain", "127.0.0.1"}
	if code := run(context.Background(), args, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"implied rate, 65500 bytes on eth10 (10 Mbit/s)",
		"65508 bytes of IPv4 data need 45 IPv4 packets (MTU 1500",
		"44 × 1480 + 1 × 388 bytes",
		"20 IP header + 14 Ethernet header + 4 FCS + 8 preamble+SFD + 12 inter-frame gap = 58 bytes of overhead",
		"65508 + 45 × 58 = 68118 bytes",
		"goodput = 65500 bytes × 8 × 18.35/s = 9.62 Mbit/s",
		"the wire alone needs 2 × 68118 bytes = 108.989 ms per round trip",
		"counted without the inter-frame gap (IP data and headers, Ethernet header, preamble and FCS per packet): 67578 bytes",
		"kernel transmit timestamps",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(strings.ToLower(out.String()), "seed") {
		t.Errorf("output cites a seed report:\n%s", out.String())
	}
}
