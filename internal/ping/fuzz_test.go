package ping

import (
	"net"
	"testing"
)

func FuzzParseReply(f *testing.F) {
	echo, _ := MarshalEcho(false, 1, 2, Payload(2, 16))
	echo[0] = 0
	f.Add(echo, false)
	f.Add(append([]byte{3, 4, 0, 0, 0, 0, 5, 0xdc}, append(v4Header(1, 2028), echo[:8]...)...), false)
	f.Add([]byte{2, 0, 0, 0, 0, 0, 5, 0, 0x60, 0, 0, 0, 0, 0, 44}, true)
	f.Add(append(v4Header(1, 44), echo...), false)
	f.Fuzz(func(t *testing.T, b []byte, v6 bool) {
		r, err := ParseReply(b, v6)
		if err == nil {
			tr := newTracker(r.ID, net.IPv4(198, 18, 0, 2))
			tr.add(&probe{seq: r.Seq & 0xffff, size: len(r.Payload), deadline: timeAt(10)})
			tr.match(r, net.IPv4(198, 18, 0, 2), timeAt(5))
		}
		if s, err := StripIPv4Header(b); err == nil {
			_, _ = ParseReply(s, false)
		}
	})
}
