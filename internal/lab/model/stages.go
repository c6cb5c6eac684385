package model

import "time"

// stage is one capacity stage: given a datagram's arrival time at the stage
// (never decreasing from call to call) it returns the time it leaves, or
// ok=false when the stage's queue is full and the datagram is dropped.
type stage interface {
	admit(in time.Duration, size int) (out time.Duration, ok bool)
	reason() Reason
}

// queueLimit bounds what waits in a stage: bytes (when > 0) or the wait a
// datagram would have (when > 0).
type queueLimit struct {
	bytes int64
	wait  time.Duration
}

type waiting struct {
	out  time.Duration
	size int
}

// queue tracks the datagrams a stage has admitted that have not left yet.
type queue struct {
	limit queueLimit
	items []waiting
	head  int
	bytes int64
}

// drain forgets the datagrams that left by now.
func (q *queue) drain(now time.Duration) {
	for q.head < len(q.items) && q.items[q.head].out <= now {
		q.bytes -= int64(q.items[q.head].size)
		q.head++
	}
	if q.head > 1024 && q.head*2 > len(q.items) {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.head = 0
	}
}

// fits says whether a datagram of size bytes arriving at in and leaving at
// out may wait.
func (q *queue) fits(in, out time.Duration, size int) bool {
	if q.limit.wait > 0 {
		return out-in <= q.limit.wait
	}
	return out <= in || q.bytes+int64(size) <= q.limit.bytes
}

func (q *queue) add(out time.Duration, size int) {
	q.items = append(q.items, waiting{out, size})
	q.bytes += int64(size)
}

// rateStage serialises datagrams onto a link: each takes its line time
// after the previous one has left.
type rateStage struct {
	queue
	wireTime func(payload int) time.Duration
	busy     time.Duration // when the line is free
}

func (r *rateStage) reason() Reason { return ByRateQueue }

func (r *rateStage) admit(in time.Duration, size int) (time.Duration, bool) {
	r.drain(in)
	out := max(in, r.busy) + r.wireTime(size)
	if !r.fits(in, out, size) {
		return 0, false
	}
	r.busy = out
	r.add(out, size)
	return out, true
}

// serviceStage is a device that takes one receive buffer every slot.
// Datagrams are packed into buffers in arrival order: one joins the open
// buffer while the device has not taken it yet and it fits (bytes and
// count); otherwise it starts a new buffer in the next free slot. One larger
// than the buffer takes ceil(size/buffer) slots and leaves with the last.
type serviceStage struct {
	queue
	slot      time.Duration
	buffer    int // 0: one datagram per buffer
	perBuffer int // 0: no cap

	started   bool
	lastSlot  time.Duration // start of the latest slot handed out
	open      bool          // the latest slot's buffer can take more
	openBytes int
	openCount int
}

func (s *serviceStage) reason() Reason { return ByService }

func (s *serviceStage) admit(in time.Duration, size int) (time.Duration, bool) {
	s.drain(in)
	if s.open && s.lastSlot > in && s.openBytes+size <= s.buffer && (s.perBuffer == 0 || s.openCount < s.perBuffer) {
		// It takes no new buffer, so the queue (of buffers) has room for it.
		s.openBytes += size
		s.openCount++
		s.add(s.lastSlot, size)
		return s.lastSlot, true
	}
	n := 1
	if s.buffer > 0 && size > s.buffer {
		n = (size + s.buffer - 1) / s.buffer
	}
	first := in
	if s.started {
		first = max(in, s.lastSlot+s.slot)
	}
	out := first + time.Duration(n-1)*s.slot
	if !s.fits(in, out, size) {
		return 0, false
	}
	s.started, s.lastSlot = true, out
	s.open = s.buffer > 0 && n == 1
	s.openBytes, s.openCount = size, 1
	s.add(out, size)
	return out, true
}

// tickStage lets at most budget datagrams leave at each tick boundary (k ×
// period from the start of the run). A datagram leaves at the first
// boundary after it arrived that has budget left. The budget belongs to the
// tick, not to a timer firing, so however late the caller sends what is due,
// the rate stays budget/period.
type tickStage struct {
	queue
	period time.Duration
	budget int
	tick   int64 // latest tick handed out
	used   int   // datagrams given to it
}

func (t *tickStage) reason() Reason { return ByTickQueue }

func (t *tickStage) admit(in time.Duration, size int) (time.Duration, bool) {
	t.drain(in)
	k := int64(in/t.period) + 1
	used := 0
	if k <= t.tick {
		k, used = t.tick, t.used
		if used >= t.budget {
			k, used = k+1, 0
		}
	}
	out := time.Duration(k) * t.period
	if !t.fits(in, out, size) {
		return 0, false
	}
	t.tick, t.used = k, used+1
	t.add(out, size)
	return out, true
}
