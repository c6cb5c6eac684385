package engine

import (
	"context"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/stats"
)

// Flow is a set of stream counters reported together as one line per
// interval (the SUM line over streams).
type Flow struct {
	Name     string // "" for a single-flow test, else "forward"/"reverse"
	Counters []*stats.Counters
	// TCP, when set, are the flow's sending TCP connections: each interval
	// then carries their TCP_INFO figures (result.Interval.TCP).
	TCP []net.Conn
	// Sender marks a flow of what this side sends: its intervals are
	// result.MeasuredBySender, with no receiver figures.
	Sender   bool
	prev     stats.Snapshot
	prevRetr []int64 // each TCP connection's lifetime retransmits at the last report
}

// tcpFigures reads the flow's TCP_INFO for the interval just closed:
// retransmits since the last report, the rest as they are now.
func (f *Flow) tcpFigures() *result.TCPInfo {
	if len(f.TCP) == 0 {
		return nil
	}
	for len(f.prevRetr) < len(f.TCP) {
		f.prevRetr = append(f.prevRetr, 0)
	}
	return sampleTCP(f.TCP, f.prevRetr)
}

// Intervals emits one result.Interval per flow every period, built from
// snapshots of the flows' counters, until Stop, which emits the last,
// partial interval. The per-datagram path never takes a lock: counters are
// atomics owned by their streams.
type Intervals struct {
	start  time.Time
	period time.Duration
	omit   time.Duration
	end    time.Duration // SetEnd; 0: none
	emit   func(result.Interval)

	mu     sync.Mutex // guards following fields
	omitAt map[*stats.Counters]stats.Snapshot
	flows  []*Flow
	last   time.Duration
	all    []result.Interval
	// held is how many of the last rows of all (one per flow) are not
	// emitted yet: a periodic row waits for the merge window after its
	// end (window), since Stop may still stretch it with a short tail.
	held int
	done chan struct{}
	wg   sync.WaitGroup
}

// NewIntervals returns a reporter for the flows, with intervals counted from
// start. emit (may be nil) is called from the reporter's goroutine.
func NewIntervals(start time.Time, period time.Duration, emit func(result.Interval), flows ...*Flow) *Intervals {
	return &Intervals{start: start, period: period, emit: emit, flows: flows, done: make(chan struct{})}
}

// AddFlow adds a flow (for streams that start later, like a connect-back).
func (iv *Intervals) AddFlow(f *Flow) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	iv.flows = append(iv.flows, f)
}

// SetOmit makes the first d of the test an omitted period (-O): an
// interval ends exactly at d, even between two periods or without a
// period, and every interval up to d is marked Omitted. Call it before Run.
func (iv *Intervals) SetOmit(d time.Duration) { iv.omit = max(d, 0) }

// SetEnd says the test's traffic ends at d: the periodic reports stop
// before d, and Stop reports (and emits, once) the last interval, up to
// where it is told the counting ended, so that no row is printed for the
// boundary at d while counts still arrive. Call it before Run.
func (iv *Intervals) SetEnd(d time.Duration) { iv.end = max(d, 0) }

// OmittedCounts returns what the counters c (of one of the flows) had
// counted when the omitted period ended (SetOmit), read in the same
// instant as the omitted interval of its flow, so that per-stream figures
// taken from it add up to that interval; false before the period ended or
// without one.
func (iv *Intervals) OmittedCounts(c *stats.Counters) (stats.Snapshot, bool) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	s, ok := iv.omitAt[c]
	return s, ok
}

// next returns the end of the interval after the one that ended at last,
// and false when no more periodic reports are due (no period, and the
// omitted period, if any, is over).
func (iv *Intervals) next(last time.Duration) (time.Duration, bool) {
	var at time.Duration
	if iv.period > 0 {
		at = (last/iv.period + 1) * iv.period
	}
	if iv.omit > last && (at == 0 || iv.omit < at) {
		at = iv.omit
	}
	return at, at > 0
}

// Run starts the periodic reports. Without a period only Stop reports,
// and the end of an omitted period (SetOmit). A periodic row is emitted a
// merge window (window) after its end: till then Stop may stretch it with
// a tail too short for a row of its own, so that a row, once printed, is
// never changed.
func (iv *Intervals) Run(ctx context.Context) {
	if _, ok := iv.next(0); !ok {
		return
	}
	iv.wg.Add(1)
	go func() {
		defer iv.wg.Done()
		var last time.Duration
		for {
			at, ok := iv.next(last)
			if !ok || iv.end > 0 && at >= iv.end {
				return
			}
			last = at
			if !iv.wait(ctx, at) {
				return
			}
			iv.report(at, iv.period > 0 || at == iv.omit, at > iv.omit)
			if !iv.wait(ctx, at+iv.window()) {
				return // Stop emits what is held
			}
			iv.release()
		}
	}()
}

// wait waits until at into the test; false when Stop or ctx ended it.
func (iv *Intervals) wait(ctx context.Context, at time.Duration) bool {
	t := time.NewTimer(time.Until(iv.start.Add(at)))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-iv.done:
	case <-ctx.Done():
	}
	return false
}

// window is how short a tail after the last periodic row is merged into
// that row rather than given a row of its own (TailWindow).
func (iv *Intervals) window() time.Duration { return TailWindow(iv.period) }

// TailWindow is how short a tail after the last periodic row (of period)
// is merged into that row rather than given a row of its own: a tenth of
// the period, at least a millisecond.
func TailWindow(period time.Duration) time.Duration { return max(period/10, time.Millisecond) }

// Ending is what a reporter does with the tail between its last row and
// the end of the counting (EndWith).
type Ending int

// The endings of a reporter's rows.
const (
	// EndFirstRow: no row yet; the whole test is the one row.
	EndFirstRow Ending = iota
	// EndRelease: the end is at or before the last row; emit what is held.
	EndRelease
	// EndMerge: a tail shorter than the window joins the held last row,
	// which is then emitted.
	EndMerge
	// EndOwnRow: emit what is held, then the tail as a row of its own.
	EndOwnRow
	// EndNoRow: emit what is held; the short tail counted nothing and a
	// row past the end of the traffic would say nothing.
	EndNoRow
)

// EndWith decides how rows end, the one rule of Intervals.Stop and of any
// reporter that sums rows of its own the same way: n rows so far, the last
// ending at last, held when the last rows are not emitted yet, counted
// when the tail counted anything, the counting ending at at.
func EndWith(n int, last, at time.Duration, held, counted bool, period time.Duration) Ending {
	switch {
	case n == 0:
		return EndFirstRow
	case at <= last:
		return EndRelease
	case held && at-last < TailWindow(period):
		return EndMerge
	case counted || at-last >= TailWindow(period):
		return EndOwnRow
	}
	return EndNoRow
}

// release emits the held rows.
func (iv *Intervals) release() {
	iv.mu.Lock()
	out := slices.Clone(iv.all[len(iv.all)-iv.held:])
	iv.held = 0
	iv.mu.Unlock()
	iv.emitRows(out)
}

// emitRows emits rows, when emit is set.
func (iv *Intervals) emitRows(out []result.Interval) {
	if iv.emit == nil {
		return
	}
	for _, in := range out {
		iv.emit(in)
	}
}

// Stop ends the periodic reports and emits the final, partial interval
// ending at end, which must be when the counting ended. A row is never
// changed once emitted: a tail shorter than the merge window (window) is
// merged into the last periodic row only while that row is still held;
// otherwise the tail is a row of its own, or none when nothing at all was
// counted in it (a row past the end of the traffic would say nothing). So
// the emitted rows are exactly the ones returned, and they add up to
// everything counted up to Stop. It returns every interval. Without a
// period the one interval (the whole test) is returned but not emitted:
// like iperf without -i, the summary alone stands for it.
func (iv *Intervals) Stop(end time.Time) []result.Interval {
	close(iv.done)
	iv.wg.Wait()
	at := end.Sub(iv.start)
	iv.mu.Lock()
	last, n, held := iv.last, len(iv.all), iv.held == len(iv.flows) && iv.held > 0
	counted := iv.tailCounted()
	iv.mu.Unlock()
	final := iv.period > 0 || at <= iv.omit
	// (never merged into an omitted interval, which is not held: counts
	// after the omitted period belong to the summary)
	switch EndWith(n, last, at, held, counted, iv.period) {
	case EndFirstRow:
		iv.report(at, final, false)
	case EndMerge:
		iv.mergeTail(at)
		iv.release()
	case EndOwnRow:
		iv.release()
		iv.report(at, final, false)
	default:
		iv.release()
	}
	iv.mu.Lock()
	defer iv.mu.Unlock()
	return iv.all
}

// tailCounted reports whether any flow counted anything since the last
// report. iv.mu is held.
func (iv *Intervals) tailCounted() bool {
	for _, f := range iv.flows {
		var now stats.Snapshot
		for _, c := range f.Counters {
			now = now.Add(c.Snapshot())
		}
		if now.Sub(f.prev).Counted() {
			return true
		}
	}
	return false
}

// mergeTail adds the counts since the last report to the last (held,
// not yet emitted) interval of each flow and stretches it to at.
func (iv *Intervals) mergeTail(at time.Duration) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	iv.last = at
	for k, f := range iv.flows {
		var now stats.Snapshot
		for _, c := range f.Counters {
			now = now.Add(c.Snapshot())
		}
		d := now.Sub(f.prev)
		f.prev = now
		i := len(iv.all) - len(iv.flows) + k
		if i < 0 {
			continue
		}
		in := &iv.all[i]
		in.End = at.Seconds()
		in.Bytes += d.Bytes
		in.Packets += d.Packets
		in.Lost += d.Lost
		in.OutOfOrder += d.OutOfOrder
		in.Duplicates += d.Duplicates
		in.JitterMS = float64(d.Jitter) / 1e6
		if t := f.tcpFigures(); t != nil {
			if in.TCP != nil {
				t.Retransmits += in.TCP.Retransmits
			}
			in.TCP = t
		}
		if secs := in.End - in.Start; secs > 0 {
			in.BitsPerSecond = float64(in.Bytes) * 8 / secs
		}
	}
}

// report closes the interval ending at at for every flow and emits it when
// emit is set; with hold, the rows are held for release instead (rows
// held before are emitted first).
func (iv *Intervals) report(at time.Duration, emit, hold bool) {
	iv.mu.Lock()
	from := iv.last
	iv.last = at
	var out []result.Interval
	for _, f := range iv.flows {
		var now stats.Snapshot
		for _, c := range f.Counters {
			cs := c.Snapshot()
			now = now.Add(cs)
			if at <= iv.omit {
				if iv.omitAt == nil {
					iv.omitAt = map[*stats.Counters]stats.Snapshot{}
				}
				iv.omitAt[c] = cs
			}
		}
		d := now.Sub(f.prev)
		f.prev = now
		secs := (at - from).Seconds()
		in := result.Interval{
			Start: from.Seconds(), End: at.Seconds(), Bytes: d.Bytes, Packets: d.Packets,
			Lost: d.Lost, OutOfOrder: d.OutOfOrder, Duplicates: d.Duplicates, JitterMS: float64(d.Jitter) / 1e6, Flow: f.Name,
			TCP: f.tcpFigures(), Omitted: at <= iv.omit,
		}
		if f.Sender {
			in.MeasuredBy = result.MeasuredBySender
		}
		if secs > 0 {
			in.BitsPerSecond = float64(d.Bytes) * 8 / secs
		}
		out = append(out, in)
	}
	before := slices.Clone(iv.all[len(iv.all)-iv.held:])
	iv.all = append(iv.all, out...)
	iv.held = 0
	if emit && hold {
		iv.held = len(out)
	}
	iv.mu.Unlock()
	iv.emitRows(before)
	if emit && !hold {
		iv.emitRows(out)
	}
}
