//go:build linux

package labtest

import (
	"fmt"

	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/testutil/wirecap"
)

// wireCapture captures a lab TCP test's data where it arrives, past the
// shaper (in A for -R, in B otherwise): the wire's own account of what it
// carried, taken by the kernel, independent of wirebench and of the peer.
func wireCapture(lab *netlab.Lab, reverse bool, port int) (*wirecap.Capture, error) {
	h := lab.B
	if reverse {
		h = lab.A
	}
	var c *wirecap.Capture
	err := h.Do(func() (err error) {
		c, err = wirecap.Open(h.Ifname, uint16(port))
		return err
	})
	return c, err
}

// fullSegment is the least payload of a segment the wire's window starts
// at: the test's data go in full segments (MSS 1448), where a header, an
// iperf CLIENTHDRACK or a handshake does not.
const fullSegment = 1000

// wireRate is the TCP goodput the wire carried towards the receiver in
// pkts (port is the server's; reverse: the server sends): the payload,
// by sequence number, that arrived after the first full segment, over the
// kernel's time from that segment's arrival to the last one's. Sequence
// numbers make it whole even when the capture missed segments.
type wireRate struct {
	bps      float64
	bytes    uint32
	seconds  float64
	segments int
}

func (w wireRate) String() string {
	if w.bps == 0 {
		return fmt.Sprintf("nothing it can tell from (%d captured segments)", w.segments)
	}
	return fmt.Sprintf("%d bytes over %.4f s in %d captured segments: %.3f Mbit/s", w.bytes, w.seconds, w.segments, w.bps/1e6)
}

// measureWire computes wireRate from a stopped capture; its rate is zero
// when the capture holds too little to tell.
func measureWire(pkts []wirecap.Packet, port int, reverse bool) (w wireRate) {
	var first, last *wirecap.Packet
	for i := range pkts {
		p := &pkts[i]
		if p.Proto != 6 || p.Payload == 0 || p.At.IsZero() || (p.Src.Port() == uint16(port)) != reverse {
			continue
		}
		w.segments++
		if first == nil && p.Payload >= fullSegment {
			first = p
		}
		if first != nil && (last == nil || !p.At.Before(last.At)) {
			last = p
		}
	}
	if first == nil || last == first {
		return w
	}
	w.bytes = last.Seq + uint32(last.Payload) - (first.Seq + uint32(first.Payload))
	if w.seconds = last.At.Sub(first.At).Seconds(); w.seconds > 0 {
		w.bps = float64(w.bytes) * 8 / w.seconds
	}
	return w
}
