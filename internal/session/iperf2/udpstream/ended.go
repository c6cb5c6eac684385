package udpstream

import (
	"time"

	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// Ended is what a server keeps of a test after it forgot the test's
// Receiver: enough to tell a late copy of one of its datagrams (which the
// network may deliver long after the FIN) from the first datagram of a new
// test from the same source, which a copy would otherwise open (a phantom
// test of one datagram). It holds no buffer: a few words.
type Ended struct {
	layout   i2wire.Layout
	announce bool // its datagrams announce a client header
	seq64    bool
	ext      i2wire.IDExtender
	started  bool      // it counted a data id
	maxID    int64     // the highest data id it counted
	lastSent time.Time // the latest send stamp it carried (the sender's clock)
	// copies are the datagrams taken for copies since (Hold), at most
	// StreamOf-1 of at most maxCopyLen bytes.
	copies []Held
}

// StreamOf is how many datagrams in a row, ids rising, that repeat a
// finished test's ids and send stamps make a new test: a sender whose clock
// restarted (an embedded device's uptime after a reboot, given the same
// source port) or that stamps every run alike. Fewer are copies the network
// delivered late.
const StreamOf = 3

// maxCopyLen bounds a datagram an Ended holds as a possible copy: longer
// ones open a test at once, as before, so a remembered test holds at most
// (StreamOf-1) × maxCopyLen bytes.
const maxCopyLen = 2048

// Ended returns what is to be kept of this (finished) test.
func (t *Receiver) Ended() Ended {
	e := Ended{layout: t.layout, announce: t.hasHdr || t.hdrErr != nil, seq64: t.seq64, ext: t.ext, lastSent: t.lastSent}
	if e.started = t.rx.Seq.Started(); e.started {
		e.maxID = t.rx.Seq.Max()
	}
	return e
}

// Repeats reports whether datagram b, from the source of the ended test,
// is a copy of one of its datagrams: the same layout and header
// announcement, a data id the test had reached, and a send stamp not after
// the latest the test carried. A new test from the same source (a client
// given the same source port) carries later send stamps, its sender's
// clock having moved on since the old test's FIN; a datagram with no send
// stamp cannot be told from one and is taken for a new test, as before.
func (e Ended) Repeats(b []byte) bool {
	if !e.started || i2wire.DetectUDPLayout(b) != e.layout || announcesHeader(b, e.layout) != e.announce {
		return false
	}
	id, sec, usec, ok := i2wire.ParseDatagram(b, e.layout, e.seq64)
	if !ok || sec == 0 && usec == 0 || e.lastSent.IsZero() {
		return false
	}
	if !e.seq64 {
		ext := e.ext // a copy: peeking moves nothing
		id = ext.Extend(id)
	}
	return !i2wire.IsFIN(id) && id <= e.maxID && !sentAt(sec, usec).After(e.lastSent)
}

// Hold takes datagram b, which Repeats, for a copy and keeps it; when it
// is the StreamOf-th in a row with rising ids, it is a new test's instead,
// and Hold returns the datagrams to feed that test before b (the copies
// kept), with stream true. b must outlive the call only when stream is
// false (it is copied).
func (e *Ended) Hold(b []byte, at, arrived time.Time) (start []Held, stream bool) {
	if len(b) > maxCopyLen {
		return nil, true
	}
	id, _, _, _ := i2wire.ParseDatagram(b, e.layout, e.seq64)
	if n := len(e.copies); n > 0 {
		if last, _, _, _ := i2wire.ParseDatagram(e.copies[n-1].B, e.layout, e.seq64); id <= last {
			e.copies = e.copies[:0] // not rising: a new run of copies
		}
	}
	if len(e.copies)+1 >= StreamOf {
		start, e.copies = e.copies, nil
		return start, true
	}
	e.copies = append(e.copies, Held{B: append([]byte(nil), b...), At: at, Arrived: arrived})
	return nil, false
}

// heldBelow counts the late datagrams held with ids below id.
func (t *Receiver) heldBelow(id int64) int {
	n := 0
	for _, h := range t.held {
		if hid, _, _, _ := i2wire.ParseDatagram(h.B, t.layout, t.seq64); hid < id {
			n++
		}
	}
	return n
}

// sentAt is a datagram's send stamp.
func sentAt(sec, usec uint32) time.Time { return time.Unix(int64(sec), int64(usec)*1000) }
