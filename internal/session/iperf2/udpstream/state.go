package udpstream

import (
	"net/netip"
	"time"

	"github.com/wirebench/wirebench/internal/stats"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// What a Receiver's owner reads of its test.

// Peer is the test's source.
func (t *Receiver) Peer() netip.AddrPort { return t.peer }

// Layout is the datagram layout of the test's first datagram.
func (t *Receiver) Layout() i2wire.Layout { return t.layout }

// Header is the client header the first datagram carried; ok is false when
// it announced none or sent it cut short (HeaderErr).
func (t *Receiver) Header() (h i2wire.ClientHeader, ok bool) { return t.hdr, t.hasHdr }

// HeaderErr is why a client header the first datagram announced could not
// be read; nil when it could, or none was announced.
func (t *Receiver) HeaderErr() error { return t.hdrErr }

// Counters are the test's running counts, for interval reports, as of the
// last Publish (or the FIN, or EndIdle).
func (t *Receiver) Counters() *stats.Counters { return &t.rx.C }

// Publish makes Counters show every datagram fed so far. Feed leaves them
// be (a receiver's counts cost five atomic stores): the owner calls this
// at the end of each read.
func (t *Receiver) Publish() { t.rx.Publish() }

// Received is how many distinct datagrams were counted, up to the last one
// fed (Counters may lag it until Publish).
func (t *Receiver) Received() int64 { return t.rx.Seq.Received() }

// Started reports whether any datagram with an id was counted.
func (t *Receiver) Started() bool { return t.rx.Seq.Started() }

// Done reports whether the test ended: its FIN arrived, or EndIdle.
func (t *Receiver) Done() bool { return t.done }

// IdleEnded reports whether the test was ended by EndIdle, with no FIN.
func (t *Receiver) IdleEnded() bool { return t.idleEnded }

// Report is the server report built at the test's FIN; nil before, or
// when the test ended with none (EndIdle).
func (t *Receiver) Report() []byte { return t.report }

// Resends is how often the report was sent again for late FINs.
func (t *Receiver) Resends() int { return t.resends }

// Unanswered is how many late FINs got no report (the resend limit was
// reached, or the test ended with none).
func (t *Receiver) Unanswered() int64 { return t.unanswered }

// Last is the latest datagram's arrival.
func (t *Receiver) Last() time.Time { return t.last }

// LastData is the latest data datagram's arrival (the FIN excluded).
func (t *Receiver) LastData() time.Time { return t.lastData }

// Seq64 reports whether the test's ids are 64-bit.
func (t *Receiver) Seq64() bool { return t.seq64 }
