package linerate

import (
	"math"
	"testing"
)

// FuzzMedium drives the medium syntax (named and custom:RATE,OVERHEAD,
// MINFRAME,MAXFPS) and every calculation over it with arbitrary stacks and
// sizes: no panic, and every figure of an accepted calculation is finite
// and within what the medium allows.
func FuzzMedium(f *testing.F) {
	f.Add("eth100", "udp", 1470, 1500, uint8(0), 1, 50e6)
	f.Add("usb2-ncm", "tcp", 1448, 1500, uint8(3), 4, 1e6)
	f.Add("custom:100M,24,64,0", "icmp", 65500, 1500, uint8(0), 1, 1.0)
	f.Add("custom:1k,0,0,1e-300", "raw", 0, 68, uint8(4), 1, 0.0)
	f.Add("custom:1e-300,1048576,1048576", "udp", 1, 65535, uint8(1), 1, 1e300)
	f.Add("usb3-eem", "udp", 8, 1280, uint8(2), 64, -1.0)
	f.Fuzz(func(t *testing.T, spec, proto string, payload, mtu int, bits uint8, aggregate int, goodput float64) {
		m, err := LookupMedium(spec)
		if err != nil {
			return
		}
		if am, err := m.WithAggregate(aggregate); err == nil {
			m = am
		}
		tr, err := ParseTransport(proto)
		if err != nil {
			tr = UDP
		}
		s := Stack{IPv6: bits&1 != 0, Transport: tr, TCPTimestamps: bits&2 != 0, VLAN: bits&4 != 0, MTU: mtu}
		if p, err := RawPayload(s, payload); err == nil && (p < 0 || p > s.mtu()) {
			t.Fatalf("RawPayload(%d) = %d", payload, p)
		}
		b, err := Analyze(m, s, payload)
		if err != nil {
			return
		}
		for name, v := range map[string]float64{"frame bytes": b.FrameBytes, "wire bytes": b.WireBytes, "wire time": b.WireTime,
			"packets/s": b.PacketsPerSecond, "frames/s": b.FramesPerSecond, "goodput": b.GoodputBPS, "efficiency": b.Efficiency} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%s %v for %q %v payload %d: %+v", name, v, spec, s, payload, b)
			}
		}
		if b.GoodputBPS > m.BitRate*(1+1e-9) || b.Efficiency > 1+1e-9 {
			t.Fatalf("goodput %v above the medium's %v (efficiency %v)", b.GoodputBPS, m.BitRate, b.Efficiency)
		}
		if len(b.Fragments) == 0 {
			t.Fatalf("no frames for %d bytes", payload)
		}
		_, _ = Measured(m, s, payload, goodput)
		_, _ = AnalyzeEcho(m, s, payload)
		_ = MediumRate(m.BitRate)
	})
}
