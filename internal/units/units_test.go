package units

import "testing"

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
	}{
		{"100M", Rate{Value: 100e6}},
		{"1.5G", Rate{Value: 1.5e9}},
		{"64k", Rate{Value: 64e3}},
		{"250000", Rate{Value: 250000}},
		{"10Mbps", Rate{Value: 10e6}},
		{"8000pps", Rate{Value: 8000, PPS: true}},
		{"8000PPS", Rate{Value: 8000, PPS: true}},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "fast", "-1M", "0", "10X", "pps", "1e400", "NaN"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) succeeded, want an error", bad)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := map[string]int64{"1470": 1470, "128K": 131072, "2M": 2 << 20, "1G": 1 << 30, "64KB": 65536, "0": 0}
	for in, want := range tests {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-5", "1.5", "abc", "12Q"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded, want an error", bad)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := map[float64]string{95.7e6: "95.7 Mbits/sec", 1.048e9: "1.05 Gbits/sec", 512: "512 bits/sec", 123.4e3: "123 Kbits/sec"}
	for in, want := range tests {
		if got := FormatBits(in); got != want {
			t.Errorf("FormatBits(%v) = %q, want %q", in, got, want)
		}
	}
	if got := FormatBytes(11.4 * 1024 * 1024); got != "11.4 MBytes" {
		t.Errorf("FormatBytes = %q", got)
	}
}

// TestFormatIn checks -f against what iperf 2.1.8 prints for the same
// letters (e.g. "-f k": "423680 KBytes  11398315 Kbits/sec").
func TestFormatIn(t *testing.T) {
	const n, bps = 433848320.0, 11398315e3
	tests := []struct {
		f           byte
		bytes, rate string
	}{
		{0, "414 MBytes", "11.4 Gbits/sec"},
		{'a', "414 MBytes", "11.4 Gbits/sec"},
		{'A', "414 MBytes", "1.33 GBytes/sec"},
		{'b', "433848320 Bytes", "11398315000 bits/sec"},
		{'B', "433848320 Bytes", "1424789375 Bytes/sec"},
		{'k', "423680 KBytes", "11398315 Kbits/sec"},
		{'m', "414 MBytes", "11398 Mbits/sec"},
		{'g', "0.40 GBytes", "11.4 Gbits/sec"},
		{'K', "423680 KBytes", "1391396 KBytes/sec"},
		{'M', "414 MBytes", "1359 MBytes/sec"},
		{'G', "0.40 GBytes", "1.33 GBytes/sec"},
	}
	for _, tt := range tests {
		if got := FormatBytesIn(n, tt.f); got != tt.bytes {
			t.Errorf("FormatBytesIn(%q) = %q, want %q", tt.f, got, tt.bytes)
		}
		if got := FormatRateIn(bps, tt.f); got != tt.rate {
			t.Errorf("FormatRateIn(%q) = %q, want %q", tt.f, got, tt.rate)
		}
		if tt.f != 0 && !ValidFormat(tt.f) {
			t.Errorf("ValidFormat(%q) = false", tt.f)
		}
	}
	for _, f := range []byte{0, 'x', 't', 'T'} {
		if ValidFormat(f) {
			t.Errorf("ValidFormat(%q) = true", f)
		}
	}
}
