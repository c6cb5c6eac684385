package standin

import "slices"

// Impairment is a deliberate, deterministic damage plan applied by the UDP
// stand-in clients to their own send sequence, so that a receiver's lost,
// out-of-order and duplicate counts can be checked against what was injected.
//
// Ids are datagram sequence numbers as they appear on the wire. The FIN is
// never impaired.
type Impairment struct {
	// Drop lists ids that are never sent.
	Drop []int64
	// Swap lists pairs {a, b} with a < b: a is held back and sent right
	// after b. A pair whose b is never reached (end of test, or b dropped)
	// has a sent at the end of the data, just before the FIN, and is not
	// reported as injected.
	Swap [][2]int64
	// Repeat lists ids that are sent twice in a row.
	Repeat []int64
}

// Injected is what an impairment plan actually did during one run.
type Injected struct {
	Dropped  []int64    // ids not sent
	Swapped  [][2]int64 // pairs {a, b} sent in the order b, a
	Repeated []int64    // ids sent twice
}

// scheduler turns the sequence of generated ids into the sequence of ids to
// send, applying an Impairment on the fly (so it works for duration-bounded
// runs whose length is not known in advance).
type scheduler struct {
	plan     Impairment
	held     map[int64]int64 // b -> a: a waits for b
	waiting  []int64         // held ids in hold order
	injected Injected
}

func newScheduler(p Impairment) *scheduler {
	s := &scheduler{plan: p, held: map[int64]int64{}}
	for _, pr := range p.Swap {
		s.held[pr[1]] = pr[0]
	}
	return s
}

// next returns the ids to send now for the freshly generated id.
func (s *scheduler) next(id int64) []int64 {
	if slices.Contains(s.plan.Drop, id) {
		s.injected.Dropped = append(s.injected.Dropped, id)
		return nil
	}
	for _, pr := range s.plan.Swap {
		if pr[0] == id {
			s.waiting = append(s.waiting, id)
			return nil
		}
	}
	out := s.emit(id)
	if a, ok := s.held[id]; ok && slices.Contains(s.waiting, a) {
		s.waiting = slices.DeleteFunc(s.waiting, func(x int64) bool { return x == a })
		s.injected.Swapped = append(s.injected.Swapped, [2]int64{a, id})
		out = append(out, s.emit(a)...)
	}
	return out
}

func (s *scheduler) emit(id int64) []int64 {
	if slices.Contains(s.plan.Repeat, id) {
		s.injected.Repeated = append(s.injected.Repeated, id)
		return []int64{id, id}
	}
	return []int64{id}
}

// flush returns the ids still held back at the end of the data phase.
func (s *scheduler) flush() []int64 {
	var out []int64
	for _, id := range s.waiting {
		out = append(out, s.emit(id)...)
	}
	s.waiting = nil
	return out
}
