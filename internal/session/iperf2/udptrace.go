package iperf2

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// trace tells a test's trace (session.SetTestTrace) of one step of src's
// test; the words are built only when a test traces.
func (s *server) trace(src netip.AddrPort, format string, args ...any) {
	if session.Tracing() {
		session.Trace(src, fmt.Sprintf(format, args...))
	}
}

// traceFeed traces what one datagram fed to t did at the test's end: its
// FIN read (and how long after it arrived), a report queued, a late FIN
// answered again or not, and why.
func (s *server) traceFeed(src netip.AddrPort, t *udpTest, b []byte, wasDone, replied, unanswered bool) {
	id, _, _, ok := i2wire.ParseDatagram(b, t.rx.Layout(), t.rx.Seq64())
	if !ok || !i2wire.IsFIN(id) && !wasDone {
		return // data of a running test
	}
	// On the monotonic clock, as the fin-lag log line measures it: the
	// kernel's wall-clock stamp (at) moves with a clock step.
	lag := time.Since(s.arrived).Round(time.Millisecond)
	switch {
	case !wasDone && t.rx.Done():
		s.trace(src, "FIN (id %d) read %v after it arrived; report queued: %v", id, lag, replied)
	case !i2wire.IsFIN(id):
		s.trace(src, "a data datagram (id %d) after the FIN: counted late", id)
	case replied:
		s.trace(src, "a late FIN (id %d, read %v after it arrived) answered again", id, lag)
	case unanswered:
		s.trace(src, "a late FIN (id %d) not answered: no report to give or its resends used up", id)
	default:
		s.trace(src, "a late FIN (id %d) not answered: it arrived before the report left", id)
	}
}
