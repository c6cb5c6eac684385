// Package stats holds wirebench's pure measurement logic: sequence tracking
// (loss, out-of-order, duplicates), RFC 3550 jitter, and the per-stream
// counters that interval reports are built from. It does no I/O and reads no
// clock: every timestamp is passed in, so it is exact and testable.
package stats

// Kind classifies one arriving sequence number.
type Kind int

// The kinds of arrival.
const (
	// New is the next expected id or one beyond it (a gap before it counts
	// as lost until the missing ids arrive).
	New Kind = iota
	// OutOfOrder is an id below the highest seen that had not arrived yet:
	// it fills a gap, so it is no longer lost.
	OutOfOrder
	// Duplicate is an id that has already arrived.
	Duplicate
	// TooOld is an id so far below the highest seen that the tracker no
	// longer remembers whether it arrived (beyond Window). It is counted as
	// out of order, and Lost may then be understated by the duplicates among
	// such ids; TooOld() says how many there were.
	TooOld
)

// Window is how many ids below the highest one the tracker remembers
// exactly. Reordering deeper than this cannot tell a late datagram from a
// repeated one.
const Window = 1 << 16

// SeqTracker counts loss, reordering and duplication of a stream of
// sequence numbers exactly, as long as reordering stays within Window.
//
// Lost is exact at any moment: the ids from the lowest expected up to the
// highest seen that have not arrived. Out-of-order and duplicate counts
// are exact within the window. Unlike iperf, duplicates are counted on
// their own and never hide a loss.
//
// A SeqTracker is owned by one goroutine.
type SeqTracker struct {
	started    bool
	base       int64 // lowest id expected
	max        int64 // highest id seen
	unique     int64 // distinct ids received
	outOfOrder int64
	duplicates int64
	tooOld     int64
	gapLost    int64 // running loss: gaps opened minus gaps filled
	seen       []uint64
}

// NewSeqTracker returns a tracker expecting ids from firstID on (1 for
// modern iperf2 and iperf3, 0 for legacy iperf2). If a lower id arrives it
// becomes the first expected id.
func NewSeqTracker(firstID int64) *SeqTracker {
	return &SeqTracker{base: firstID, max: firstID - 1, seen: make([]uint64, Window/64)}
}

// Add records the arrival of id and says what kind of arrival it was.
func (t *SeqTracker) Add(id int64) Kind {
	if !t.started {
		t.started = true
		if id < t.base {
			t.base = id
			t.max = id - 1
		}
	}
	switch {
	case id > t.max:
		t.advance(id)
		t.unique++
		return New
	case id < t.base:
		// Below the first expected id: a late arrival of ids the sender
		// started from (for example id 0 after 1 from a 0-based sender).
		// Extend the expected range downwards; the ids in between are lost.
		if t.max-id >= Window {
			t.tooOld++
			t.outOfOrder++
			return TooOld
		}
		t.gapLost += t.base - id - 1
		t.base = id
		t.mark(id)
		t.unique++
		t.outOfOrder++
		return OutOfOrder
	case t.max-id >= Window:
		t.tooOld++
		t.outOfOrder++
		t.unique++
		t.gapLost--
		return TooOld
	case t.has(id):
		t.duplicates++
		return Duplicate
	default:
		t.mark(id)
		t.unique++
		t.outOfOrder++
		t.gapLost--
		return OutOfOrder
	}
}

func (t *SeqTracker) advance(id int64) {
	if id-t.max >= Window {
		clear(t.seen)
	} else {
		t.forget(t.max+1, id-t.max-1)
	}
	t.gapLost += id - t.max - 1
	t.max = id
	t.mark(id)
}

func (t *SeqTracker) idx(id int64) (int, uint64) {
	u := uint64(id) % Window
	return int(u / 64), 1 << (u % 64)
}

func (t *SeqTracker) mark(id int64)     { w, b := t.idx(id); t.seen[w] |= b }
func (t *SeqTracker) has(id int64) bool { w, b := t.idx(id); return t.seen[w]&b != 0 }

// forget clears the bits of the n ids from id on (n < Window), a whole
// 64-bit word at a time where the range covers one and masked at its
// ends, so that a datagram whose id jumps far ahead costs at most
// Window/64 word writes, not one step per id skipped. The range wraps
// around the ring at most once.
func (t *SeqTracker) forget(id, n int64) {
	pos := uint64(id) % Window
	for n > 0 {
		w, bit := pos/64, pos%64
		take := min(uint64(n), 64-bit)
		if take == 64 {
			t.seen[w] = 0
		} else {
			t.seen[w] &^= (1<<take - 1) << bit
		}
		n -= int64(take)
		pos = (pos + take) % Window
	}
}

// Started reports whether any id has been added.
func (t *SeqTracker) Started() bool { return t.started }

// First returns the lowest id expected.
func (t *SeqTracker) First() int64 { return t.base }

// Max returns the highest id seen (First()-1 before any arrived).
func (t *SeqTracker) Max() int64 { return t.max }

// Expected returns how many ids lie from the first expected to the
// highest seen.
func (t *SeqTracker) Expected() int64 { return t.max - t.base + 1 }

// Received returns the number of distinct ids received.
func (t *SeqTracker) Received() int64 { return t.unique }

// Lost returns the ids between the first expected and the highest seen
// that have not arrived.
func (t *SeqTracker) Lost() int64 {
	if l := t.Expected() - t.unique; l > 0 {
		return l
	}
	return 0
}

// Missing reports whether id is one the tracker still counts as lost: it
// lies between the first expected id and the highest seen, within Window,
// and has not arrived.
func (t *SeqTracker) Missing(id int64) bool {
	return t.started && id >= t.base && id < t.max && t.max-id < Window && !t.has(id)
}

// RunningLost returns the loss counted as gaps open minus gaps filled. It
// equals Lost within the window; interval reports take differences of it,
// so a late datagram lowers the interval it arrives in, as in iperf3.
func (t *SeqTracker) RunningLost() int64 { return t.gapLost }

// OutOfOrder returns how many ids arrived after a higher one.
func (t *SeqTracker) OutOfOrder() int64 { return t.outOfOrder }

// Duplicates returns how many ids arrived more than once (counting each
// extra copy).
func (t *SeqTracker) Duplicates() int64 { return t.duplicates }

// TooOld returns how many ids arrived too far behind to be checked for
// duplication.
func (t *SeqTracker) TooOld() int64 { return t.tooOld }
