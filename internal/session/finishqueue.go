package session

import "sync"

// FinishQueue holds the results of ended tests that the UDP reader hands
// on (Later), in the order the tests ended. Its zero value is ready.
type FinishQueue struct {
	mu      sync.Mutex
	todo    []func()
	running bool // a goroutine is draining todo
}

// Later runs f (a test's finish: its CPU figure, streamFinished,
// OnResult, the release of its per-source slot) on a goroutine of its
// own instead of the UDP reader's. When 600 tests end within a second,
// each finish run on the reader came before the reports of the FINs
// queued behind it; and what the caller does with a result (print it to
// a terminal, save it, or print it at once when the store's queue is
// full) may block for as long as it likes. One goroutine runs the queue
// while it is not empty, then ends: an idle server keeps none.
func (q *FinishQueue) Later(s *Server, f func()) {
	q.mu.Lock()
	q.todo = append(q.todo, f)
	if q.running {
		q.mu.Unlock()
		return
	}
	q.running = true
	q.mu.Unlock()
	done := s.Hold() // Serve waits for every result to be handed on
	go func() {
		defer done()
		q.drain(s)
	}()
}

// drain runs the queued finishes until none is left. A panic in one is
// logged and ends that one only.
func (q *FinishQueue) drain(s *Server) {
	for {
		q.mu.Lock()
		todo := q.todo
		q.todo = nil
		if len(todo) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		for i, f := range todo {
			_ = s.Catch("udp: handing on the result of an ended test", func() error { f(); return nil })
			todo[i] = nil
		}
	}
}
