package engine

import (
	"context"
	"net"
	"sync"
	"time"
)

// Hold pauses TCP receivers between reads for a moment and lets them go on
// afterwards. A test that ends with a control message (iperf3's TEST_END)
// holds its receivers while it sends it: a peer that keeps sending to us
// stays busy for as long as we keep reading, and on a loaded host a busy
// process waits its turn for a CPU; one whose writes find our window full
// sleeps, and the control message then wakes it at once. Nothing is lost
// while held: the data waits in the socket buffer and is read and counted
// after Resume.
//
// The zero Hold is ready to use; a Hold must not be copied after first use.
type Hold struct {
	mu     sync.Mutex
	gen    uint64        // counts Pause calls, so a reader can tell a pause's deadline from its own
	resume chan struct{} // closed by Resume; nil while not held
	conns  map[net.Conn]struct{}
}

// Pause holds every receiver using h: one blocked in a read returns from it
// at once, and none starts another until Resume. Pausing a held Hold does
// nothing.
func (h *Hold) Pause() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.resume != nil {
		return
	}
	h.gen++
	h.resume = make(chan struct{})
	for c := range h.conns {
		_ = c.SetReadDeadline(time.Unix(1, 0))
	}
}

// Resume lets the receivers held by Pause read again. Resuming a Hold that
// is not held does nothing.
func (h *Hold) Resume() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.resume != nil {
		close(h.resume)
		h.resume = nil
	}
}

// add registers a receiver's connection; remove drops it.
func (h *Hold) add(c net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns == nil {
		h.conns = make(map[net.Conn]struct{})
	}
	h.conns[c] = struct{}{}
}

func (h *Hold) remove(c net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.conns, c)
}

// state returns the Pause count and, while held, the channel Resume closes.
func (h *Hold) state() (uint64, chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gen, h.resume
}

// wait blocks while h is held, until Resume or ctx is done, and returns the
// Pause count after it.
func (h *Hold) wait(ctx context.Context) uint64 {
	for {
		gen, resume := h.state()
		if resume == nil {
			return gen
		}
		select {
		case <-resume:
		case <-ctx.Done():
			return gen
		}
	}
}
