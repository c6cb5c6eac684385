package loopback

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
)

// TestFreePortOutsideEphemeralRange: where the system names the ports it
// hands out by itself, FreePort picks none of them (one could be taken by
// any connecting socket before the caller binds it).
func TestFreePortOutsideEphemeralRange(t *testing.T) {
	lo, hi, ok := quietPorts()
	if !ok {
		t.Skipf("no ephemeral port range to keep out of here (%s)", ephemeralRangeFile)
	}
	for range 20 {
		if p := FreePort(t); p < lo || p >= hi {
			t.Fatalf("FreePort gave %d, want one in [%d, %d), below the ephemeral range", p, lo, hi)
		}
	}
}

func TestFreePortIsFree(t *testing.T) {
	port := FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("tcp %s: %v", addr, err)
	}
	defer ln.Close()
	uc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("udp %s: %v", addr, err)
	}
	uc.Close()
}

func TestBufferConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(&b, "%d\n", i)
			_ = b.String()
		}()
	}
	wg.Wait()
	if n := len(b.String()); n != 20 {
		t.Errorf("%d bytes, want 20", n)
	}
}
