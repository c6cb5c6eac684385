package web

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// LiveTest is a test in progress as the dashboard shows it.
type LiveTest struct {
	// ID is the server's test number.
	ID int `json:"id"`
	// Role is the result's role: "server" for the tests it answers.
	Role      string      `json:"role"`
	StartedAt time.Time   `json:"started_at"`
	Test      result.Test `json:"test"`
	// Intervals are the newest intervals of the test, at most
	// MaxLivePoints; DroppedIntervals counts the older ones left out.
	Intervals        []result.Interval `json:"intervals"`
	DroppedIntervals int               `json:"dropped_intervals"`
}

// Event is one server-sent event: a test started ("start", data a
// LiveTest), an interval of a test ended ("interval", data a
// LiveInterval), a test finished ("end", data a LiveEnd) or a results
// store saved it ("saved", data a LiveSaved).
type Event struct {
	Type string
	Data any
}

// LiveInterval is the data of an "interval" event.
type LiveInterval struct {
	ID       int             `json:"id"`
	Interval result.Interval `json:"interval"`
}

// LiveEnd is the data of an "end" event: the test's number, the run id
// its result was kept under in the History (0 when it was not kept) and
// its one-line summary. Pending says a results store keeps it instead:
// its run id comes in a "saved" event once it is saved (LiveSaved).
type LiveEnd struct {
	ID      int    `json:"id"`
	RunID   int64  `json:"run_id"`
	Summary string `json:"summary"`
	Pending bool   `json:"pending,omitempty"`
	// Streams are the test numbers of its parallel streams (each started
	// as a test of its own), ended with it.
	Streams []int `json:"streams,omitempty"`
}

// LiveSaved is the data of a "saved" event: a results store saved test
// ID as run RunID (0 when it could not: Warning says why). It may come
// before the test's "end" event.
type LiveSaved struct {
	ID      int    `json:"id"`
	RunID   int64  `json:"run_id"`
	Warning string `json:"warning,omitempty"`
}

// Bounds of the live state.
const (
	// MaxLivePoints is the most intervals kept per test in progress.
	MaxLivePoints = 600
	// MaxLiveTests is the most tests in progress tracked; more are
	// counted in /metrics but not shown live.
	MaxLiveTests = 4096
	// DefaultViewerBuffer is the number of events a viewer may fall
	// behind before it is dropped.
	DefaultViewerBuffer = 256
	// DefaultMaxViewers bounds the event streams open at once.
	DefaultMaxViewers = 256
)

// Hub holds the tests in progress and fans their events out to the
// viewers. Publishing never blocks: a viewer whose buffer is full is
// dropped (its stream ends; the page reconnects and starts again from a
// fresh snapshot).
type Hub struct {
	mu         sync.Mutex
	tests      map[int]*LiveTest
	viewers    map[*viewer]struct{}
	buffer     int
	maxViewers int
	dropped    int64 // viewers dropped for falling behind
	untracked  int64 // tests not shown because MaxLiveTests were live
}

type viewer struct {
	ch   chan []byte   // encoded events
	gone chan struct{} // closed when the hub dropped the viewer
}

// NewHub returns a Hub whose viewers may fall buffer events behind
// (0 = DefaultViewerBuffer) and of which at most maxViewers are connected
// at once (0 = DefaultMaxViewers).
func NewHub(buffer, maxViewers int) *Hub {
	if buffer <= 0 {
		buffer = DefaultViewerBuffer
	}
	if maxViewers <= 0 {
		maxViewers = DefaultMaxViewers
	}
	return &Hub{tests: map[int]*LiveTest{}, viewers: map[*viewer]struct{}{}, buffer: buffer, maxViewers: maxViewers}
}

// Start records a test that began.
func (h *Hub) Start(id int, role string, r *result.Result) {
	t := &LiveTest{ID: id, Role: role, StartedAt: r.StartedAt, Test: r.Test, Intervals: []result.Interval{}}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.tests) >= MaxLiveTests {
		h.untracked++
		return
	}
	h.tests[id] = t
	h.publish(Event{Type: "start", Data: t})
}

// Interval records an interval of test id.
func (h *Hub) Interval(id int, in result.Interval) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.tests[id]
	if t == nil {
		return
	}
	if len(t.Intervals) >= MaxLivePoints {
		n := copy(t.Intervals, t.Intervals[1:])
		t.Intervals = t.Intervals[:n]
		t.DroppedIntervals++
	}
	t.Intervals = append(t.Intervals, in)
	h.publish(Event{Type: "interval", Data: LiveInterval{ID: id, Interval: in}})
}

// End forgets the tests ids (a test and its parallel streams) and
// announces the end of the first.
func (h *Hub) End(end LiveEnd, ids ...int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		delete(h.tests, id)
	}
	h.publish(Event{Type: "end", Data: end})
}

// Saved announces that test id was saved as run runID (0: it was not,
// warning says why).
func (h *Hub) Saved(id int, runID int64, warning string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.publish(Event{Type: "saved", Data: LiveSaved{ID: id, RunID: runID, Warning: warning}})
}

// Active is the number of tests in progress tracked.
func (h *Hub) Active() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.tests)
}

// HubStats are the hub's counters.
type HubStats struct {
	Viewers        int   `json:"viewers"`
	DroppedViewers int64 `json:"dropped_viewers"`
	LiveTests      int   `json:"live_tests"`
	UntrackedTests int64 `json:"untracked_tests"`
}

// Stats returns the hub's counters.
func (h *Hub) Stats() HubStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return HubStats{Viewers: len(h.viewers), DroppedViewers: h.dropped, LiveTests: len(h.tests), UntrackedTests: h.untracked}
}

// Live returns a copy of the tests in progress, by test number.
func (h *Hub) Live() []LiveTest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.snapshot()
}

// Test returns a copy of test id, if it is in progress.
func (h *Hub) Test(id int) (LiveTest, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.tests[id]
	if t == nil {
		return LiveTest{}, false
	}
	c := *t
	c.Intervals = append([]result.Interval{}, t.Intervals...)
	return c, true
}

func (h *Hub) snapshot() []LiveTest {
	out := make([]LiveTest, 0, len(h.tests))
	for _, t := range h.tests {
		c := *t
		c.Intervals = append([]result.Interval{}, t.Intervals...)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// errTooManyViewers refuses a viewer beyond maxViewers.
var errTooManyViewers = fmt.Errorf("too many dashboard viewers connected")

// subscribe adds a viewer; its first event ("snapshot", the tests in
// progress) is already in its buffer, so no event between the snapshot
// and the subscription is lost.
func (h *Hub) subscribe() (*viewer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.viewers) >= h.maxViewers {
		return nil, fmt.Errorf("%w (%d)", errTooManyViewers, h.maxViewers)
	}
	v := &viewer{ch: make(chan []byte, h.buffer), gone: make(chan struct{})}
	v.ch <- encodeEvent(Event{Type: "snapshot", Data: h.snapshot()})
	h.viewers[v] = struct{}{}
	return v, nil
}

// unsubscribe removes a viewer that left.
func (h *Hub) unsubscribe(v *viewer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.viewers[v]; ok {
		delete(h.viewers, v)
		close(v.gone)
	}
}

// publish hands ev to every viewer without blocking; h.mu is held.
func (h *Hub) publish(ev Event) {
	if len(h.viewers) == 0 {
		return
	}
	b := encodeEvent(ev)
	for v := range h.viewers {
		select {
		case v.ch <- b:
		default:
			delete(h.viewers, v)
			close(v.gone)
			h.dropped++
		}
	}
}

// encodeEvent is ev in the text/event-stream format.
func encodeEvent(ev Event) []byte {
	data, err := json.Marshal(ev.Data)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", ev.Type, data)
}
