package wirecap

import (
	"net"
	"testing"
	"time"
)

// TestPortFilter: with a port filter only that port's packets arrive, IPv4
// and IPv6.
func TestPortFilter(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "::1"} {
		want, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		other, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		wantPort := uint16(want.LocalAddr().(*net.UDPAddr).Port)
		c := Start(t, "lo", wantPort)
		for _, dst := range []net.Addr{want.LocalAddr(), other.LocalAddr(), want.LocalAddr()} {
			if _, err := other.WriteTo([]byte("wirecap"), dst); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond)
		pkts := c.Stop()
		want.Close()
		other.Close()
		if len(pkts) != 2 {
			t.Fatalf("%s: %d packets captured, want the 2 to port %d: %+v", host, len(pkts), wantPort, pkts)
		}
		for _, p := range pkts {
			if p.Dst.Port() != wantPort || p.Payload != 7 || p.IPv6 != (host == "::1") {
				t.Errorf("%s: captured %+v", host, p)
			}
		}
	}
}
