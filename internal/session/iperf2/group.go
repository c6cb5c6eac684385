package iperf2

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// Parallel streams (iperf2 -P) on the server.
//
// An iperf2 client started with -P N opens N connections (TCP) or N
// source ports (UDP). Each carries the same test header, with numThreads
// = N. iperf 2.1.8's own server sums every stream of one client host that
// is active at the same time, whatever its header (active_hosts: keyed by
// peer address only, so two unrelated clients from one host are summed
// too). This server is stricter, so that a SUM never mixes two tests:
//
//   - A stream whose header announces numThreads N ≥ 2 joins the open
//     group of earlier streams from the same source address, same protocol
//     and an identical header (same flags, amount, rate, length, version:
//     the same client invocation). A group takes streams until it has N
//     or until headerJoinWindow (2 s) after its first stream, whichever
//     comes first; a stream that comes later starts a group of its own.
//     (iperf opens its -P streams at once: 2 s leaves room for a SYN
//     retransmitted after 1 s.)
//   - A stream with no header (zperf, ESP-IDF, iperf -C) is a single test.
//     iperf 2.1.8 sends its header on every stream, also for a plain -P
//     (flags 40010078 on TCP, numThreads = N), so the streams an iperf
//     server sums are all announced. A header-less stream says nothing
//     about company: grouping such streams by source address and arrival
//     time (tried: within 250 ms) merged unrelated sources of one host
//     into one SUM, for example in this package's robustness tests, and
//     would do the same to several devices behind one NAT address.
//   - Streams announcing 1 (or legacy modes: -r, -d, -R, --full-duplex) are
//     single tests, exactly as before.
//
// A group ends when every stream that joined it has ended and it takes no
// more: a client that announces 4 streams and opens 3 gets the result of
// the 3, with a warning, at the latest when the join window is over;
// nothing waits longer for the fourth. A group of one stream is reported
// as a single test (with that warning when more were announced). --max-tests counts streams, not groups: each stream holds
// its own socket and state.

// headerJoinWindow bounds how long after its first stream a group of
// streams announced in their header takes more.
const headerJoinWindow = 2 * time.Second

// joinWindow is headerJoinWindow, or the server's own (tests only).
func (s *server) joinWindow() time.Duration {
	if s.testJoinWindow > 0 {
		return s.testJoinWindow
	}
	return headerJoinWindow
}

// maxGroupStreams is the most streams one group takes (iperf2's own -P
// limit is far above any real use; iperf3 allows 128).
const maxGroupStreams = 128

// groupKey tells which streams may belong to one group.
type groupKey struct {
	proto string
	addr  netip.Addr
	hdr   i2wire.ClientHeader
}

// streamGroup is the parallel streams of one client, reported as one test.
type streamGroup struct {
	s      *server
	key    groupKey
	id     int // the group's test number: its first stream's
	want   int // streams announced in the header
	start  time.Time
	joinBy time.Time

	mu        sync.Mutex // guards the fields below
	members   []*groupMember
	closed    bool // takes no more streams
	finalized bool // reported
	waiting   bool // a timer ends the join window
	ended     int  // members whose stream ended
	last      time.Duration
	sums      []result.Interval
	ticking   bool
	// held: the last rows (heldStreams and the last of sums) wait for
	// the merge window before they are emitted (grouptail.go).
	held        bool
	heldStreams []session.StreamInterval

	ctx  context.Context
	stop chan struct{}
	tick sync.WaitGroup
}

// groupMember is one stream of a group.
type groupMember struct {
	g    *streamGroup
	id   int
	c    *stats.Counters
	prev stats.Snapshot // at the group's last interval; guarded by g.mu
	res  *result.Result
	done bool
	end  time.Time // when its stream finished
}

// joinGroup puts a plain receive stream (test number id, counting into c
// from start) into its client's group and returns its membership, or nil
// when the stream is a single test.
func (s *server) joinGroup(ctx context.Context, proto string, peer netip.AddrPort, hdr i2wire.ClientHeader, hasHdr bool,
	id int, start time.Time, c *stats.Counters) *groupMember {
	if !hasHdr || hdr.NumThreads < 2 {
		return nil
	}
	key := groupKey{proto: proto, addr: peer.Addr(), hdr: hdr}
	s.groupsMu.Lock()
	defer s.groupsMu.Unlock()
	if g := s.groups[key]; g != nil {
		if m := g.add(start, id, c); m != nil {
			s.CPUJoined(id, g.id)
			return m
		}
	}
	g := newStreamGroup(ctx, s, key, id, start)
	if s.groups == nil {
		s.groups = map[groupKey]*streamGroup{}
	}
	s.groups[key] = g
	m := g.add(start, id, c)
	g.startTicker(ctx)
	return m
}

func newStreamGroup(ctx context.Context, s *server, key groupKey, id int, start time.Time) *streamGroup {
	g := &streamGroup{s: s, key: key, id: id, start: start, ctx: ctx, stop: make(chan struct{})}
	g.want = min(int(key.hdr.NumThreads), maxGroupStreams)
	g.joinBy = start.Add(s.joinWindow())
	return g
}

// add takes a stream that arrived at at, or returns nil when the group
// takes no more.
func (g *streamGroup) add(at time.Time, id int, c *stats.Counters) *groupMember {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || len(g.members) > 0 && at.After(g.joinBy) || len(g.members) >= maxGroupStreams {
		g.closed = true
		return nil
	}
	m := &groupMember{g: g, id: id, c: c}
	g.members = append(g.members, m)
	if len(g.members) >= g.want {
		g.closed = true
	}
	return m
}

// emitter returns the emit function of a stream's own intervals: none
// for a stream of a group, whose intervals the group reports.
func (s *server) emitter(m *groupMember, id int) func(result.Interval) {
	if m != nil {
		return nil
	}
	return s.Interval(id)
}

// startTicker starts the group's interval reports.
func (g *streamGroup) startTicker(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	period := g.s.cfg.Interval
	if g.ticking || period <= 0 {
		return
	}
	g.ticking = true
	g.tick.Add(1)
	go func() {
		defer g.tick.Done()
		defer g.s.RecoverPanic(fmt.Sprintf("test %d: group interval reports", g.id))
		for k := 1; ; k++ {
			at := time.Duration(k) * period
			if d, ok := g.key.hdr.Duration(); ok && d > 0 && at >= d {
				return // the last row is finalInterval's, once the counting ended
			}
			next := g.start.Add(at)
			if !g.waitUntil(ctx, next) {
				return
			}
			g.report(next.Sub(g.start), true, true)
			if !g.waitUntil(ctx, next.Add(engine.TailWindow(period))) {
				return // finalInterval emits what is held
			}
			g.release()
		}
	}()
}

// report closes the group interval ending at at: each stream's share and
// their sum, emitted when emit is set.
func (g *streamGroup) report(at time.Duration, emit, hold bool) {
	g.mu.Lock()
	from := g.last
	g.last = at
	var streams []session.StreamInterval
	var sum stats.Snapshot
	for _, m := range g.members {
		now := m.c.Snapshot()
		d := now.Sub(m.prev)
		m.prev = now
		sum = sum.Add(d)
		if m.done && d.Bytes == 0 && d.Packets == 0 {
			continue // an ended stream: no more lines, as iperf
		}
		streams = append(streams, session.StreamInterval{ID: m.id, Interval: intervalOf(from, at, d)})
	}
	in := intervalOf(from, at, sum)
	prevStreams, prevSum, wasHeld := g.takeHeld()
	g.sums = append(g.sums, in)
	if emit && hold {
		g.held, g.heldStreams = true, streams
	}
	multi := len(g.members) > 1
	g.mu.Unlock()
	if wasHeld {
		g.emitRows(prevStreams, prevSum, multi)
	}
	if emit && !hold {
		g.emitRows(streams, in, multi)
	}
}

// emitRows emits one interval's rows: the streams', and their sum when
// there are several.
func (g *streamGroup) emitRows(streams []session.StreamInterval, in result.Interval, multi bool) {
	if f := g.s.cfg.OnGroupInterval; f != nil {
		if !multi {
			f(g.id, streams, nil)
			return
		}
		f(g.id, streams, &in)
		return
	}
	if f := g.s.cfg.OnInterval; f != nil {
		for _, st := range streams {
			f(st.ID, st.Interval)
		}
	}
}

// intervalOf is the interval from..at holding the counts d.
func intervalOf(from, at time.Duration, d stats.Snapshot) result.Interval {
	in := result.Interval{Start: from.Seconds(), End: at.Seconds(), Bytes: d.Bytes, Packets: d.Packets,
		Lost: d.Lost, OutOfOrder: d.OutOfOrder, Duplicates: d.Duplicates, JitterMS: float64(d.Jitter) / 1e6}
	if secs := (at - from).Seconds(); secs > 0 {
		in.BitsPerSecond = float64(d.Bytes) * 8 / secs
	}
	return in
}

// streamFinished hands on the result r of the stream with test number id:
// as its own test when it has no group, else to its group, which reports
// once its last stream ended.
func (s *server) streamFinished(m *groupMember, id int, r *result.Result) {
	if m == nil {
		s.Finished(id, r)
		return
	}
	g := m.g
	g.mu.Lock()
	m.res, m.done, m.end = r, true, time.Now()
	g.ended++
	g.mu.Unlock()
	g.maybeFinish()
}

// maybeFinish reports the group when every stream that joined it has
// ended and it takes no more: it is full, its join window is over, or the
// server stops. Streams that ended early wait for the rest of the window,
// at most, for the others announced.
func (g *streamGroup) maybeFinish() {
	g.mu.Lock()
	if g.finalized || g.ended < len(g.members) {
		g.mu.Unlock()
		return
	}
	if wait := time.Until(g.joinBy); !g.closed && wait > 0 && g.ctx.Err() == nil {
		if !g.waiting {
			g.waiting = true
			done := g.s.Hold()
			time.AfterFunc(wait, func() {
				defer done()
				defer g.s.RecoverPanic(fmt.Sprintf("test %d: ending a group of streams", g.id))
				g.mu.Lock()
				g.waiting = false
				g.closed = true
				g.mu.Unlock()
				g.maybeFinish()
			})
		}
		g.mu.Unlock()
		return
	}
	g.closed, g.finalized = true, true
	g.mu.Unlock()

	s := g.s
	s.groupsMu.Lock()
	if s.groups[g.key] == g {
		delete(s.groups, g.key)
	}
	s.groupsMu.Unlock()
	close(g.stop)
	g.tick.Wait()
	if len(g.members) == 1 {
		m := g.members[0]
		if g.want > 1 {
			m.res.Warn(g.missing(1))
		}
		// Its rows were printed by the group: those are the ones kept.
		g.finalInterval(g.countingEnd())
		m.res.Intervals = g.rows()
		s.Finished(m.id, m.res)
		return
	}
	g.finalInterval(g.countingEnd())
	s.Finished(g.id, g.result())
}

// missing says that fewer streams came than the client announced.
func (g *streamGroup) missing(n int) string {
	return fmt.Sprintf("the client announced %d parallel streams but %d arrived within %v of the first: the figures cover those only",
		g.want, n, g.s.joinWindow())
}

// result is the group's test: the first stream's description, each
// stream's figures, their sum as the receiver, the SUM intervals, and the
// streams' warnings, diagnoses and first error, each named by stream.
func (g *streamGroup) result() *result.Result {
	g.mu.Lock()
	defer g.mu.Unlock()
	first := g.members[0].res
	r := result.New("server")
	r.Version, r.StartedAt, r.Test = first.Version, first.StartedAt, first.Test
	r.Test.Streams = max(g.want, len(g.members))
	r.Intervals = append(r.Intervals, g.sums...)
	var sum result.Receiver
	hostDrops := int64(0)
	for _, m := range g.members {
		mr := m.res
		r.Streams = append(r.Streams, result.Stream{ID: m.id, Receiver: mr.Receiver})
		if mr.Receiver != nil {
			session.SumReceiver(&sum, mr.Receiver)
			hostDrops = max(hostDrops, mr.Receiver.HostDrops)
		}
		for _, w := range mr.Warnings {
			r.Warn(fmt.Sprintf("stream %d: %s", m.id, w))
		}
		for _, d := range mr.Diagnoses {
			r.Diagnoses = append(r.Diagnoses, fmt.Sprintf("stream %d: %s", m.id, d))
		}
		if mr.Error != "" && r.Error == "" {
			r.Error = fmt.Sprintf("stream %d: %s", m.id, mr.Error)
		}
	}
	if r.Test.Protocol != result.UDP {
		sum.PacketsPerSecond = 0
	}
	// The streams share one socket on UDP: each counted the socket's drops
	// during its own life, so the drops of the whole are the largest.
	sum.HostDrops = hostDrops
	sum.Source = "local"
	r.Receiver = &sum
	if g.want > len(g.members) {
		r.Warn(g.missing(len(g.members)))
	}
	return r
}
