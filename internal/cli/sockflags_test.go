package cli

import "testing"

func TestParseTOS(t *testing.T) {
	for in, want := range map[string]int{"0x10": 16, "16": 16, "020": 16, "0": 0, "255": 255, "0xb8": 0xb8,
		"lowdelay": 0x10, "THROUGHPUT": 0x08, "reliability": 0x04, "lowcost": 0x02} {
		got, err := parseTOS(in)
		if err != nil || got != want {
			t.Errorf("parseTOS(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "256", "-1", "0x", "ef", "1.5"} {
		if v, err := parseTOS(in); err == nil {
			t.Errorf("parseTOS(%q) = %d, want an error", in, v)
		}
	}
}

func TestParseBind(t *testing.T) {
	tests := []struct {
		in   string
		host string
		port int
	}{
		{"127.0.0.2", "127.0.0.2", 0},
		{"127.0.0.2:6000", "127.0.0.2", 6000},
		{"::1", "::1", 0},
		{"fe80::1", "fe80::1", 0},
		{"[::1]:6000", "::1", 6000},
		{"[::1]", "::1", 0},
		{"host.example:5", "host.example", 5},
	}
	for _, tt := range tests {
		host, port, err := parseBind(tt.in)
		if err != nil || host != tt.host || port != tt.port {
			t.Errorf("parseBind(%q) = %q, %d, %v; want %q, %d", tt.in, host, port, err, tt.host, tt.port)
		}
	}
	for _, in := range []string{"", ":6000", "127.0.0.1:x", "127.0.0.1:70000", "[::1]:", "[::1", "eth0%x"} {
		if h, p, err := parseBind(in); err == nil {
			t.Errorf("parseBind(%q) = %q, %d; want an error", in, h, p)
		}
	}
}

func TestSockFlagsOptions(t *testing.T) {
	s := sockFlags{window: "64K", mss: 536, nodelay: true, tos: "0x10", ttl: 9}
	o, err := s.options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Buffer != 65536 || o.MSS != 536 || !o.NoDelay || !o.SetTOS || o.TOS != 16 || o.TTL != 9 {
		t.Errorf("options = %+v", o)
	}
	if o, _ := (&sockFlags{tos: "0"}).options(); !o.SetTOS || o.TOS != 0 {
		t.Errorf("-S 0 must be set explicitly: %+v", o)
	}
}

func TestIperf3LongNames(t *testing.T) {
	cmd := newClientCmd(&env{})
	if err := cmd.ParseFlags([]string{"--set-mss", "536", "--no-delay", "--version6", "--tos", "0x10"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mss", "nodelay", "ipv6_domain", "tos"} {
		if !cmd.Flags().Changed(name) {
			t.Errorf("--%s not set by iperf3's spelling", name)
		}
	}
}
