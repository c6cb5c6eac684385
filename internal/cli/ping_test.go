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
		{"no host", []string{"ping"}, "expected one HOST"},
		{"bad socket", []string{"ping", "--socket", "magic", "127.0.0.1"}, `invalid --socket "magic"`},
		{"too big", []string{"ping", "-s", "65508", "127.0.0.1"}, "size 65508 is over the largest echo payload, 65507 bytes"},
		{"bad interval", []string{"ping", "-i", "soon", "127.0.0.1"}, "invalid --interval"},
		{"bad medium", []string{"ping", "--medium", "pigeon", "127.0.0.1"}, "invalid --medium"},
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
		Schema string
		Socket struct {
			Kind         string
			RxTimestamps string `json:"rx_timestamps"`
		}
		Sizes   []struct{ Size, Sent, Received int }
		Implied []struct {
			Size       int
			ImpliedBPS float64 `json:"implied_bps"`
			Steps      []string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if doc.Schema != PingSchema || doc.Socket.Kind != "raw" || doc.Socket.RxTimestamps != "kernel" || len(doc.Sizes) != 2 || len(doc.Implied) != 2 {
		t.Fatalf("document %+v", doc)
	}
	for i, s := range doc.Sizes {
		if s.Sent != 3 || s.Received != 3 || doc.Implied[i].ImpliedBPS <= 0 || len(doc.Implied[i].Steps) == 0 {
			t.Errorf("size %d: %+v, implied %+v", s.Size, s, doc.Implied[i])
		}
	}
}
