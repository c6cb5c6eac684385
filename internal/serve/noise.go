package serve

import (
	"sync/atomic"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// What a header-less test must have carried to be saved (Config.KeepRaw
// saves every one): it has no header, so any datagram from a new source,
// and any connection that says nothing, is one. Port scans, probes and
// stray traffic would otherwise grow the results store without limit.
const (
	// RawMinDatagrams and RawMinSeconds: a UDP test at least this many
	// datagrams over at least this long (an ESP-IDF client's default
	// 10-second test sends hundreds).
	RawMinDatagrams = 10
	RawMinSeconds   = 1.0
)

// LooksLikeTest reports whether r is worth saving as a test: always, but
// for a header-less (raw) test that carried fewer than RawMinDatagrams UDP
// datagrams or over less than RawMinSeconds, or a header-less TCP
// connection that carried no byte. A test that ended in an error is saved.
func LooksLikeTest(r *result.Result) bool {
	if r.Test.Dialect != session.DialectRaw || r.Error != "" {
		return true
	}
	rcv := r.Receiver
	if r.Test.Protocol == result.TCP {
		return rcv != nil && rcv.Bytes > 0
	}
	return rcv != nil && rcv.Packets >= RawMinDatagrams && rcv.Seconds >= RawMinSeconds
}

// noiseCount counts the header-less tests not saved, and says so on the
// log at the 1st, 10th, 100th … (once per cause, with the count so far).
type noiseCount struct{ n atomic.Int64 }

// skipped counts one more and logs when its count is a power of ten.
func (c *noiseCount) skipped(logf func(string, ...any)) {
	n := c.n.Add(1)
	if logf != nil && isPow10(n) {
		logf("not saved: header-less tests that did not look like tests (UDP: under %d datagrams or %g s; TCP: no data): %d so far, counted here only; --keep-raw saves every one", RawMinDatagrams, RawMinSeconds, n)
	}
}

// isPow10 reports whether n is 1, 10, 100, …
func isPow10(n int64) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}
