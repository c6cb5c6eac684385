package iperf2

// IDExtender reads the 32-bit datagram ids of a stream whose ids carry no
// upper half (a legacy or header-less stream, or one whose header did not
// set FlagSeqNo64b) as the 64-bit ids the sender counted, across the
// 32-bit wrap, as an RTP receiver extends its 16-bit sequence numbers
// (RFC 3550, appendix A.1).
//
// Read alone, a 32-bit id is int64(int32(low)): from 2^31 datagrams on
// (35 minutes at 1 M/s) every data id reads as negative, which is a FIN,
// and the test ended there with wrong counts. Extended, a datagram's bits
// have two readings: data, the id with those low 32 bits nearest the id
// expected next, and a FIN, whose count (the bits negated: a FIN carries
// the next id negated, its re-sends the ids after it) is at or up to
// FINReach above the one expected. With only one of them it is that one;
// with both, the nearer to the id expected (data on a tie), and after a
// FIN, the FIN: the stream sends only FINs after its first, and late data
// below it. Until a stream nears 2^30 this reads every id as before.
//
// Only near each multiple of 2^31 can both readings be near: there a data
// datagram after a loss of more ids than the FIN's distance, or one
// reordered across the crossing, is taken for a FIN, and a FIN that lost
// more of the last ids than the distance to the data reading is taken for
// data (its re-sends then too, and the test ends at the idle timeout). A
// sender whose datagrams say their ids' upper half (FlagSeqNo64b) is read
// without guessing; one that writes it unannounced helps (ExtendUpper).
type IDExtender struct {
	started bool
	next    int64 // the id expected next: one above the highest data id
	fin     int64 // the count of the first FIN read (0: none yet)
}

// FINReach is how far above the id expected next a FIN may carry its
// count: a FIN overtaking the last data, and iperf 2.1's 200 re-sends.
const FINReach = 1 << 12

// Extend returns the 64-bit id of raw, a datagram's id as ParseDatagram
// reads it without seq64 (the sign-extended low 32 bits). Negative ids
// are FINs, as before.
func (e *IDExtender) Extend(raw int64) int64 { return e.extend(raw, 0, false) }

// ExtendUpper is Extend for a datagram of the modern layout, whose upper
// id word (offset 12) is upper: iperf 2.1 and 2.2 write it on every
// datagram (the sign-extended upper half of the id: all ones on a FIN),
// even where no header says so (a connect-back, datagrams too short for
// the header); others leave filler there (zperf's "zzzz", 2.0's payload
// pattern, 2.0.5's header flags: often zero). Where both readings are
// near, a word that is the upper half of one of them decides (all ones on
// a FIN at 2^31); 0 and any other word leave the nearer reading.
func (e *IDExtender) ExtendUpper(raw int64, upper uint32) int64 { return e.extend(raw, upper, true) }

func (e *IDExtender) extend(raw int64, upper uint32, hasUpper bool) int64 {
	u := uint32(raw)
	if !e.started {
		e.started = true
		if raw >= 0 {
			e.next = raw + 1
		}
		return raw
	}
	data := nearest(u, e.next)
	fin := nearest(-u, e.next)
	finNear := fin >= e.next && fin-e.next <= FINReach
	if e.fin != 0 {
		finNear = fin >= e.fin && fin-e.fin <= FINReach // its re-sends
	}
	isFIN := finNear && (e.fin != 0 || data < e.next || fin-e.next < data-e.next)
	if finNear && e.fin == 0 && hasUpper && abs(data-e.next) <= FINReach {
		// Both readings near (at an odd multiple of 2^31, where their
		// upper halves always differ): the word decides if it is one of
		// them, except 0, which is as likely filler (iperf 2.0.5's
		// header flags, zeroed payload) as the data's upper half.
		switch {
		case upper == uint32(-fin>>32):
			isFIN = true
		case upper == uint32(data>>32) && upper != 0:
			isFIN = false
		}
	}
	switch {
	case isFIN:
		if e.fin == 0 {
			e.fin = fin
		}
		return -fin
	case data >= e.next:
		e.next = data + 1
	}
	return data
}

func abs(v int64) int64 { return max(v, -v) }

// nearest is the value with low 32 bits u nearest ref (within -2^31..2^31).
func nearest(u uint32, ref int64) int64 { return ref + int64(int32(u-uint32(ref))) }
