//go:build linux

package hostdrops

import (
	"net/netip"
	"testing"
)

func TestParseSNMP(t *testing.T) {
	if n, err := parseSNMP(testSNMP, "SndbufErrors"); n != 37 || err != nil {
		t.Errorf("parseSNMP SndbufErrors = %d, %v; want 37", n, err)
	}
	if n, err := parseSNMP(testSNMP, "RcvbufErrors"); n != 0 || err != nil {
		t.Errorf("parseSNMP RcvbufErrors = %d, %v; want 0", n, err)
	}
	if _, err := parseSNMP([]byte("Ip: Forwarding\nIp: 1\n"), "SndbufErrors"); err == nil {
		t.Error("no Udp lines: no error")
	}
	snmp6 := []byte("Udp6InDatagrams                 \t5\nUdp6RcvbufErrors \t3\nUdp6SndbufErrors                \t8\nUdpLite6SndbufErrors 1\n")
	if n, err := parseSNMP6(snmp6, "SndbufErrors"); n != 8 || err != nil {
		t.Errorf("parseSNMP6 SndbufErrors = %d, %v; want 8", n, err)
	}
	if n, err := parseSNMP6(snmp6, "RcvbufErrors"); n != 3 || err != nil {
		t.Errorf("parseSNMP6 RcvbufErrors = %d, %v; want 3", n, err)
	}
}

// TestReadLoopback reads the real counters for 127.0.0.1: the SNMP table
// is always there, with RcvbufErrors for a receiver on this host; lo's
// root qdisc is readable too.
func TestReadLoopback(t *testing.T) {
	c := Read(netip.MustParseAddr("127.0.0.1"))
	if !c.SndbufOK {
		t.Errorf("SndbufErrors not readable: %s", c.Why)
	}
	if !c.RcvbufOK {
		t.Errorf("RcvbufErrors not read for a receiver on this host: %s", c.Why)
	}
	if c.QdiscOK && c.Interface != "lo" {
		t.Errorf("route to 127.0.0.1 leaves by %q", c.Interface)
	}
	t.Logf("%+v", c)
}
