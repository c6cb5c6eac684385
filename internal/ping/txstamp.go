package ping

import (
	"sync"
	"time"
)

// txQueue matches the kernel's transmit timestamps to the sends they
// stamp. The kernel numbers a socket's sends from 0 (SOF_TIMESTAMPING_OPT_ID)
// and gives each timestamp the number of its send; the number restarts at
// 0 when the counter is reset, which starts a new generation here. Every
// method expects mu to be held.
type txQueue struct {
	mu   sync.Mutex
	gen  uint32 // how many times the kernel's counter was reset
	next uint32 // the number the kernel gives the next send
	got  map[txKey]time.Time
}

// txStamp is one timestamp read from the error queue.
type txStamp struct {
	n  uint32 // the send's number (ee_data)
	at time.Time
}

// txKeep bounds how many unclaimed sends' timestamps are kept: those of
// probes never answered would otherwise pile up.
const txKeep = 256

// sent returns the key of the send that has just succeeded.
func (q *txQueue) sent() txKey {
	k := txKey{q.gen, q.next}
	q.next++
	return k
}

// reset starts a new generation: the kernel's counter is back at 0.
func (q *txQueue) reset() {
	q.gen++
	q.next = 0
}

// add files a timestamp under the current generation.
func (q *txQueue) add(ts txStamp) {
	if q.got == nil {
		q.got = make(map[txKey]time.Time)
	}
	q.got[txKey{q.gen, ts.n}] = ts.at
	if len(q.got) > txKeep {
		q.prune()
	}
}

// prune forgets the timestamps of older generations and of sends more
// than txKeep before the next one.
func (q *txQueue) prune() {
	for k := range q.got {
		if k.gen != q.gen || q.next-k.n > txKeep {
			delete(q.got, k)
		}
	}
}

// take returns and forgets the timestamp of the send s. A timestamp from
// before s was sent cannot be its own (a send of an earlier generation
// whose number came round again) and is refused.
func (q *txQueue) take(s Sent) (time.Time, bool) {
	at, ok := q.got[s.key]
	if !ok {
		return time.Time{}, false
	}
	delete(q.got, s.key)
	if at.IsZero() || at.Before(s.At) {
		return time.Time{}, false
	}
	return at, true
}
