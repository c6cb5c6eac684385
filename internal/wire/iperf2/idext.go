package iperf2

// IDExtender reads the 32-bit datagram ids of a stream whose ids carry no
// upper half (a legacy or header-less stream, or one whose header did not
// set FlagSeqNo64b) as the 64-bit ids the sender counted, across the
// 32-bit wrap, as an RTP receiver extends its 16-bit sequence numbers
// (RFC 3550, appendix A.1).
//
// Read alone, a 32-bit id is int64(int32(low)): from 2^31 datagrams on
// (35 minutes at 1 M/s) every data id reads as negative, which is a FIN,
// and the test ended there with wrong counts. Extended, an id is the value
// with the same low 32 bits nearest the id expected next. One at or above
// that is data (in order, or early). One below it is late data, or the
// FIN: a FIN carries the next id negated (its re-sends the ids after it),
// so it is the FIN when its bits, negated, give an id at or up to FINReach
// above the one expected. Until a stream nears 2^31 this reads every id as
// before. Near each multiple of 2^31 a datagram's bits can mean both:
// there a datagram reordered across the crossing can still be taken for
// a FIN, and a FIN sent just below it is taken for data (its re-sends
// then too, and the test ends at the idle timeout).
type IDExtender struct {
	started bool
	next    int64 // the id expected next: one above the highest data id
}

// FINReach is how far above the id expected next a FIN may carry its
// count: a FIN overtaking the last data, and iperf 2.1's 200 re-sends.
const FINReach = 1 << 12

// Extend returns the 64-bit id of raw, a datagram's id as ParseDatagram
// reads it without seq64 (the sign-extended low 32 bits). Negative ids
// are FINs, as before.
func (e *IDExtender) Extend(raw int64) int64 {
	u := uint32(raw)
	if !e.started {
		e.started = true
		if raw >= 0 {
			e.next = raw + 1
		}
		return raw
	}
	data := nearest(u, e.next)
	if data >= e.next {
		e.next = data + 1
		return data
	}
	if fin := nearest(-u, e.next); fin >= e.next && fin-e.next <= FINReach {
		return -fin
	}
	return data
}

// nearest is the value with low 32 bits u nearest ref (within -2^31..2^31).
func nearest(u uint32, ref int64) int64 { return ref + int64(int32(u-uint32(ref))) }
