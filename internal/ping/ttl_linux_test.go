//go:build linux

package ping

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/result"
)

// TestSetTTL sets the TTL (hop limit) on a system socket and reads it
// back from the kernel.
func TestSetTTL(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name       string
		ip         net.IP
		level, opt int
	}{
		{"ipv4", net.ParseIP("127.0.0.1"), unix.IPPROTO_IP, unix.IP_TTL},
		{"ipv6", net.ParseIP("::1"), unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(Config{Target: tc.ip, Socket: result.PingSocketRaw})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if err := p.SetTTL(7); err != nil {
				t.Fatal(err)
			}
			got, err := unix.GetsockoptInt(p.conn.(*sysConn).fd, tc.level, tc.opt)
			if err != nil || got != 7 {
				t.Errorf("the kernel has TTL %d (%v), want 7", got, err)
			}
			if err := p.SetTTL(0); err == nil {
				t.Error("TTL 0 accepted")
			}
		})
	}
}
