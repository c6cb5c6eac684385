//go:build linux

package ping

import (
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
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
			res, err := Run(ctx, tc.ip.String(), Config{Target: tc.ip, Socket: SocketRaw},
				Options{Sizes: []int{tc.size}, Count: 20, Interval: 50 * time.Millisecond, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Sizes[0]
			if res.Error != "" || s.Sent != 20 || s.Received != 20 || s.Corrupt != 0 || s.Duplicates != 0 || s.Late != 0 {
				t.Fatalf("result %+v (error %q)", s, res.Error)
			}
			if res.Socket.Kind != SocketRaw {
				t.Errorf("socket kind %q, want raw", res.Socket.Kind)
			}
			t.Logf("%s %d bytes: socket %s timestamps %s; rtt min/p50/avg/max %v/%v/%v/%v",
				tc.name, tc.size, res.Socket.Network, res.Socket.RxTimestamps, s.RTT.Min, s.RTT.P50, s.RTT.Avg, s.RTT.Max)
			if tc.name == "ipv4" {
				compareIputils(t, s.RTT.P50)
			}
		})
	}
}

// compareIputils runs iputils ping with the same size and logs both
// medians. Timing is logged, never asserted.
func compareIputils(t *testing.T, ours time.Duration) {
	bin, err := exec.LookPath("ping")
	if err != nil {
		t.Log("iputils ping is not installed (apt-get install iputils-ping): median comparison skipped")
		return
	}
	out, err := exec.Command(bin, "-n", "-s", "65500", "-c", "20", "-i", "0.05", "127.0.0.1").CombinedOutput()
	if err != nil {
		t.Logf("iputils ping failed: %v\n%s", err, out)
		return
	}
	var rtts []time.Duration
	for _, m := range regexp.MustCompile(`time=([0-9.]+) ms`).FindAllSubmatch(out, -1) {
		ms, _ := strconv.ParseFloat(string(m[1]), 64)
		rtts = append(rtts, time.Duration(ms*1e6))
	}
	if len(rtts) == 0 {
		t.Logf("no RTTs in iputils output:\n%s", out)
		return
	}
	slices.Sort(rtts)
	theirs := Percentile(rtts, 50)
	t.Logf("median RTT 65500 bytes on 127.0.0.1: wirebench %v, iputils ping %v (ratio %.2f)",
		ours, theirs, float64(ours)/float64(theirs))
}
