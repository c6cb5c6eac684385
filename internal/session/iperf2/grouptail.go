package iperf2

import (
	"context"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
)

// A group's interval rows follow the rule of engine.Intervals: a periodic
// row is held for the merge window after its end, so that a short tail
// can still be merged into it, and it is never changed once emitted.

// waitUntil waits until t; false when the group stopped or ctx ended.
func (g *streamGroup) waitUntil(ctx context.Context, t time.Time) bool {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-g.stop:
	case <-ctx.Done():
	}
	return false
}

// takeHeld returns the held rows and forgets them. g.mu is held.
func (g *streamGroup) takeHeld() ([]session.StreamInterval, result.Interval, bool) {
	if !g.held {
		return nil, result.Interval{}, false
	}
	g.held = false
	streams := g.heldStreams
	g.heldStreams = nil
	return streams, g.sums[len(g.sums)-1], true
}

// release emits the held rows.
func (g *streamGroup) release() {
	g.mu.Lock()
	streams, sum, ok := g.takeHeld()
	multi := len(g.members) > 1
	g.mu.Unlock()
	if ok {
		g.emitRows(streams, sum, multi)
	}
}

// rows returns the group's rows.
func (g *streamGroup) rows() []result.Interval {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sums)
}

// countingEnd is when the group's last stream finished, or now.
func (g *streamGroup) countingEnd() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	var end time.Time
	for _, m := range g.members {
		if m.end.After(end) {
			end = m.end
		}
	}
	return countedUntil(time.Now(), end)
}

// finalInterval closes the last, partial interval at end: merged into the
// held last row when shorter than the merge window, else a row of its own
// unless nothing was counted in it; a row already emitted is never
// changed. The sums then add up to everything the streams counted.
func (g *streamGroup) finalInterval(end time.Time) {
	period := g.s.cfg.Interval
	at := end.Sub(g.start)
	g.mu.Lock()
	last, n, held := g.last, len(g.sums), g.held
	var counted bool
	for _, m := range g.members {
		if m.c.Snapshot().Sub(m.prev).Counted() {
			counted = true
		}
	}
	g.mu.Unlock()
	switch engine.EndWith(n, last, at, held, counted, period) {
	case engine.EndFirstRow:
		g.report(at, period > 0, false)
	case engine.EndMerge:
		g.mergeTail(at)
		g.release()
	case engine.EndOwnRow:
		g.release()
		g.report(at, period > 0, false)
	default:
		g.release()
	}
}

// mergeTail adds what the streams counted since the last report to the
// held rows and stretches them to at.
func (g *streamGroup) mergeTail(at time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var sum stats.Snapshot
	for _, m := range g.members {
		now := m.c.Snapshot()
		d := now.Sub(m.prev)
		m.prev = now
		sum = sum.Add(d)
		k := slices.IndexFunc(g.heldStreams, func(st session.StreamInterval) bool { return st.ID == m.id })
		if k < 0 {
			if d.Bytes == 0 && d.Packets == 0 {
				continue
			}
			g.heldStreams = append(g.heldStreams, session.StreamInterval{ID: m.id, Interval: intervalOf(g.last, g.last, stats.Snapshot{})})
			k = len(g.heldStreams) - 1
		}
		stretch(&g.heldStreams[k].Interval, at, d)
	}
	stretch(&g.sums[len(g.sums)-1], at, sum)
	g.last = at
}

// stretch adds d to in and makes it end at at.
func stretch(in *result.Interval, at time.Duration, d stats.Snapshot) {
	in.End = at.Seconds()
	in.Bytes += d.Bytes
	in.Packets += d.Packets
	in.Lost += d.Lost
	in.OutOfOrder += d.OutOfOrder
	in.Duplicates += d.Duplicates
	in.JitterMS = float64(d.Jitter) / 1e6
	if secs := in.End - in.Start; secs > 0 {
		in.BitsPerSecond = float64(in.Bytes) * 8 / secs
	}
}
