package serve

import (
	"iter"
	"sync"
)

// line is a first-in first-out line with no bound between the
// goroutines that end tests and the one that saves them: push never
// blocks (a test's goroutine must not wait on the store) and never drops
// (each entry is one result, a few kilobytes, where a lost one is a run
// the user cannot find again).
type line[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	wake   chan struct{} // one pending signal at most
	once   sync.Once
}

func (l *line[T]) init() { l.once.Do(func() { l.wake = make(chan struct{}, 1) }) }

// push appends t.
func (l *line[T]) push(t T) {
	l.init()
	l.mu.Lock()
	l.items = append(l.items, t)
	l.mu.Unlock()
	l.signal()
}

// close ends all() once every item pushed before it has been taken.
func (l *line[T]) close() {
	l.init()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.signal()
}

func (l *line[T]) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// all yields the items in the order they were pushed until the line is
// closed and empty.
func (l *line[T]) all() iter.Seq[T] {
	l.init()
	return func(yield func(T) bool) {
		for {
			l.mu.Lock()
			if len(l.items) == 0 {
				closed := l.closed
				l.mu.Unlock()
				if closed {
					return
				}
				<-l.wake
				continue
			}
			t := l.items[0]
			var zero T
			l.items[0] = zero
			l.items = l.items[1:]
			l.mu.Unlock()
			if !yield(t) {
				return
			}
		}
	}
}
