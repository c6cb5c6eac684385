package calc

import (
	"math"
	"testing"
)

// FuzzCalcSpec parses calc's sizes, media and stack flags and works out the
// whole table for what parses: bounded rows, no panic.
func FuzzCalcSpec(f *testing.F) {
	f.Add("eth100", "udp", "1470", "", 0, 1, 1500, uint8(0))
	f.Add("usb2-eem", "tcp", "64-1518", "", 128, 2, 1500, uint8(3))
	f.Add("eth1g", "raw", "", "64,128,1518", 0, 1, 9000, uint8(4))
	f.Add("custom:1,0", "icmp", "0-9223372036854775807", "", math.MaxInt, 1, 68, uint8(0))
	f.Add("custom:100M,24,64,0", "udp", "9223372036854775800-9223372036854775807", "", 100, 1, 1500, uint8(0))
	f.Fuzz(func(t *testing.T, medium, proto, payload, frame string, step, aggregate, mtu int, bits uint8) {
		c := Options{Medium: medium, Proto: proto, Payload: payload, Frame: frame, Step: step, Aggregate: aggregate, MTU: mtu,
			VLAN: bits&1 != 0, IPv6: bits&2 != 0, TCPTimestamps: bits&4 != 0, Explain: bits&8 != 0}
		p, err := c.Plan(nil)
		if err != nil {
			return
		}
		if len(p.Payloads) > MaxRows || len(p.Payloads) != len(p.Sizes) {
			t.Fatalf("%d payloads, %d sizes", len(p.Payloads), len(p.Sizes))
		}
		_, _ = Build(p)
	})
}
