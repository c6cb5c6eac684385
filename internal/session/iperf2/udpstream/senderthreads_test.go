package udpstream

import (
	"net/netip"
	"testing"
)

// TestSenderThreads: a test's UDP streams get a sending thread each up to
// the cores, and up to half of them when the peer is this host.
func TestSenderThreads(t *testing.T) {
	lo, lo6, mapped := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1"), netip.MustParseAddr("::ffff:127.0.0.1")
	far := netip.MustParseAddr("198.18.0.2")
	for _, c := range []struct {
		n    int
		peer netip.Addr
		cpus int
		want int
	}{
		{1, far, 8, 1}, {4, far, 8, 4}, {16, far, 8, 8}, {2, far, 1, 1},
		{2, lo, 2, 1}, {2, lo6, 2, 1}, {2, mapped, 2, 1}, {8, lo, 8, 4}, {3, lo, 16, 3}, {4, lo, 1, 1},
	} {
		if got := SenderThreads(c.n, c.peer, c.cpus); got != c.want {
			t.Errorf("%d streams to %v on %d cores: %d threads, want %d", c.n, c.peer, c.cpus, got, c.want)
		}
	}
}
