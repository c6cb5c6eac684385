//go:build linux

package ping

import (
	"context"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: raw ICMP sockets, namespaces")
	}
}

func TestLoopback65500(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		ip   net.IP
		size int
	}{
		{"ipv4", net.ParseIP("127.0.0.1"), 65500},
		{"ipv6", net.ParseIP("::1"), 65500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(ctx, tc.ip.String(), Config{Target: tc.ip, Socket: result.PingSocketRaw},
				Options{Sizes: []int{tc.size}, Count: 20, Interval: 50 * time.Millisecond, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Sizes[0]
			if res.Error != "" || s.Sent != 20 || s.Received != 20 || s.Corrupt != 0 || s.Duplicates != 0 || s.Late != 0 {
				t.Fatalf("result %+v (error %q)", s, res.Error)
			}
			if res.Socket.Kind != result.PingSocketRaw {
				t.Errorf("socket kind %q, want raw", res.Socket.Kind)
			}
			t.Logf("%s %d bytes: socket %s timestamps %s; rtt min/p50/avg/max %v/%v/%v/%v",
				tc.name, tc.size, res.Socket.Network, res.Socket.RxTimestamps, s.RTT.Min, s.RTT.P50, s.RTT.Avg, s.RTT.Max)
		})
	}
}

// TestLoopbackSameRunAsIputils: on loopback, our median RTT for 65500-byte
// echoes is no higher than iputils ping's, measured in interleaved rounds.
func TestLoopbackSameRunAsIputils(t *testing.T) {
	needRoot(t)
	for _, ip := range []string{"127.0.0.1", "::1"} {
		t.Run(ip, func(t *testing.T) {
			cfg := Config{Target: net.ParseIP(ip), Socket: result.PingSocketRaw}
			compareWithIputils(t, cfg, exec.CommandContext, "loopback "+ip)
		})
	}
}
