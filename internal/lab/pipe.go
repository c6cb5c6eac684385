// Package lab is wirebench's lab without hardware: a UDP reflector and a
// user-space UDP relay that apply a device model (internal/lab/model) to
// what crosses them, and count exactly what they did, so a test's own
// counts can be checked against a truth we control.
//
// The model decides every datagram's fate and release time; this package
// is the thin I/O around it: batch reads (internal/udpio), one scheduler
// goroutine per direction that sends each datagram when its time comes,
// and the counters.
package lab

import (
	"context"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/pacer"
	"github.com/wirebench/wirebench/internal/udpio"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// seqState is what one flow's sender remembers to count reordering: the
// highest data id it has sent.
type seqState struct {
	max int64
	// countFIN makes the flow's iperf2 FIN count as a data datagram, the
	// way iperf counts it (as datagram |id|): each FIN up to the first one
	// the model lets through, so a FIN the model drops is a dropped data
	// datagram, as the receiver counts it lost. Later FINs (re-sent while
	// the report is on its way) are not the test's.
	countFIN bool
	// pushed is the highest data id pushed, finPassed says a FIN was let
	// through, lastFIN is the id of the latest FIN counted; guarded by the
	// pipe's mu.
	pushed    int64
	finPassed bool
	lastFIN   int64
	// arrived is the highest id that arrived from the source; only the
	// reflector's reading goroutine touches it (flowFor).
	arrived int64
}

// finSlot says whether b, pushed on a flow with state s, is a FIN that
// counts as a data datagram (see seqState.countFIN): an iperf2 negative id
// beyond the flow's data ids, before any FIN was let through. again says it
// repeats the id of the FIN counted before it (2.0.5 and our legacy client
// re-send the same id; 2.1 counts one lower each time): the same datagram
// |id| for the receiver, counted once. Called with the pipe's mu held.
func (s *seqState) finSlot(b []byte) (fin, again bool) {
	if s == nil || !s.countFIN || s.finPassed || s.pushed <= 0 {
		return false, false
	}
	id, _, _, ok := iperf2.ParseDatagram(b, iperf2.LayoutLegacy, false)
	if !ok || id >= 0 || -id < s.pushed {
		return false, false
	}
	again = id == s.lastFIN
	s.lastFIN = id
	return true, again
}

// packet is one datagram on its way through a pipe.
type packet struct {
	buf     []byte
	conn    udpio.Conn
	to      netip.AddrPort // zero on a connected socket
	id      int64          // iperf2 id, > 0 for a data datagram
	seq     *seqState
	at      time.Duration
	copies  int
	corrupt bool
}

// dataID returns the iperf2 sequence id of b when it has the iperf2
// layout and a positive id (a data datagram); 0 otherwise.
func dataID(b []byte) int64 {
	id, _, _, ok := iperf2.ParseDatagram(b, iperf2.LayoutLegacy, false)
	if !ok || id <= 0 {
		return 0
	}
	return id
}

// pipe is one direction: datagrams pushed in go through the model (nil:
// unchanged) and are sent at their release times by one goroutine.
type pipe struct {
	start time.Time
	clock pacer.SystemClock

	mu     sync.Mutex // guards the fields below
	model  *model.Model
	next   uint64        // handle of the next datagram
	lastIn time.Duration // latest arrival time given to the model
	lastRx time.Duration // receive time of the latest datagram
	maxGap time.Duration // longest time between two arrivals
	held   map[uint64]*packet
	queue  []*packet
	qhead  int
	rels   []model.Release
	counts pipeCounts
	wake   chan struct{}

	reordered, sendErrors atomic.Int64
}

// pipeCounts are a pipe's counters: the report's, and the drops by the
// model's reason, named in the report's DroppedBy at a snapshot.
type pipeCounts struct {
	Counts
	droppedBy [len(model.ReasonNames)]int64
}

func newPipe(start time.Time, spec model.Spec, seed uint64) *pipe {
	// Receive times are wall-clock times without a monotonic reading
	// (udpio), so the pipe's clock is the wall clock too.
	p := &pipe{start: start.Round(0), held: map[uint64]*packet{}, wake: make(chan struct{}, 1)}
	if !spec.Empty() {
		p.model = model.New(spec, seed)
	}
	return p
}

// push runs one datagram (its bytes are copied) that arrived at rx (the
// kernel's receive time when known) through the model.
func (p *pipe) push(b []byte, rx time.Time, conn udpio.Conn, to netip.AddrPort, seq *seqState) {
	id := dataID(b)
	data := id > 0
	// The copy is made only for a datagram the model lets through: most of
	// a lossy model's drops cost no allocation.
	newPacket := func() *packet {
		return &packet{buf: append([]byte(nil), b...), conn: conn, to: to, id: id, seq: seq, copies: 1}
	}
	p.mu.Lock()
	at := rx.Sub(p.start)
	if p.counts.In > 0 && at-p.lastRx > p.maxGap {
		p.maxGap = at - p.lastRx
	}
	p.lastRx = at
	p.counts.In++
	// counted: in the data counts (a data datagram, or the test's FIN).
	fin, again := seq.finSlot(b)
	counted := data || (fin && !again)
	if data && seq != nil {
		seq.pushed = max(seq.pushed, id)
	}
	if counted {
		p.counts.Data.In++
	}
	if p.model == nil {
		p.counts.Forwarded++
		if counted {
			p.counts.Data.Forwarded++
		}
		if fin {
			seq.finPassed = true
			if again { // the earlier copy of this FIN was dropped
				p.counts.Data.Dropped--
				p.counts.Data.Forwarded++
			}
		}
		p.enqueue(newPacket())
		p.mu.Unlock()
		return
	}
	h := p.next
	p.next++
	// The model wants arrival times that never go back; receive times from
	// two sockets (replies from several flows) may.
	now := max(at, p.lastIn)
	p.lastIn = now
	p.rels = p.model.Expire(p.rels[:0], now)
	var fate model.Fate
	var why model.Reason
	p.rels, fate, why = p.model.Arrive(p.rels, now, h, len(b), data)
	p.count(fate, why, data, counted)
	if fin && fate != model.Dropped {
		seq.finPassed = true
		if again {
			// The earlier copy of this FIN, counted dropped, got through
			// after all: the receiver lost no datagram for it.
			p.counts.Data.Dropped--
			p.counts.Data.Forwarded++
		}
	}
	var pk *packet
	if fate != model.Dropped {
		pk = newPacket()
	}
	if fate == model.Reordered {
		p.held[h] = pk
	}
	for _, r := range p.rels {
		q := pk
		if r.H != h {
			q = p.held[r.H]
			delete(p.held, r.H)
		}
		q.at, q.copies, q.corrupt = r.At, r.Copies, r.Corrupt
		p.enqueue(q)
	}
	p.mu.Unlock()
}

// count adds one datagram's fate to the counters: counted says it is in
// the data counts (a data datagram or the test's FIN), data that it is a
// data datagram (only those count as duplicated or corrupted data: a
// receiver counts neither for a FIN). Called with mu held.
func (p *pipe) count(f model.Fate, why model.Reason, data, counted bool) {
	c := &p.counts
	switch f {
	case model.Dropped:
		c.Dropped++
		c.droppedBy[why]++
		if counted {
			c.Data.Dropped++
		}
		return
	case model.Duplicated:
		c.Duplicated++
		if data {
			c.Data.Duplicated++
		}
	case model.Corrupted:
		c.Corrupted++
		if data {
			c.Data.Corrupted++
		}
	}
	c.Forwarded++
	if counted {
		c.Data.Forwarded++
	}
}

// enqueue appends a released packet and wakes the sender. Called with mu
// held.
func (p *pipe) enqueue(pk *packet) {
	p.queue = append(p.queue, pk)
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// due takes the packets whose time has come (with the held ones whose
// hold expired) and says when the next one is due (ok=false: none queued).
func (p *pipe) due(dst []*packet, flush bool) ([]*packet, time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Since(p.start)
	if p.model != nil {
		if flush {
			p.rels = p.model.Flush(p.rels[:0], now)
		} else {
			p.rels = p.model.Expire(p.rels[:0], now)
		}
		for _, r := range p.rels {
			pk := p.held[r.H]
			delete(p.held, r.H)
			pk.at, pk.copies, pk.corrupt = r.At, r.Copies, r.Corrupt
			p.queue = append(p.queue, pk)
		}
	}
	for p.qhead < len(p.queue) && (flush || p.queue[p.qhead].at <= now) {
		dst = append(dst, p.queue[p.qhead])
		p.queue[p.qhead] = nil
		p.qhead++
	}
	if p.qhead == len(p.queue) {
		p.queue, p.qhead = p.queue[:0], 0
	}
	var next time.Duration
	ok := false
	if p.qhead < len(p.queue) {
		next, ok = p.queue[p.qhead].at, true
	}
	if p.model != nil {
		if at, held := p.model.NextExpiry(); held && (!ok || at < next) {
			next, ok = at, true
		}
	}
	return dst, next - now, ok
}

// preciseWait is the longest wait slept precisely (and deaf to arrivals);
// longer ones wait on a timer until about then.
const preciseWait = 2 * time.Millisecond

// run sends until ctx ends, then sends what is still queued or held.
func (p *pipe) run(ctx context.Context) {
	// Releases are due to the microsecond (a 1 ms tick): sleep precisely on
	// a thread of our own, as the paced senders do.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pacer.TuneThread()
	var batch []*packet
	var msgs []udpio.Message
	for {
		var wait time.Duration
		var pending bool
		batch, wait, pending = p.due(batch[:0], false)
		msgs = p.send(batch, msgs)
		if len(batch) > 0 {
			continue
		}
		switch {
		case ctx.Err() != nil:
			batch, _, _ = p.due(batch[:0], true)
			p.send(batch, msgs)
			return
		case pending && wait < preciseWait:
			_ = p.clock.Sleep(ctx, wait)
		case pending:
			// A long wait (delay, a held datagram) is cut short when a
			// datagram due sooner arrives.
			t := time.NewTimer(wait - preciseWait/2)
			select {
			case <-p.wake:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		default:
			select {
			case <-p.wake:
			case <-ctx.Done():
			}
		}
	}
}

// send writes the packets, grouped into batches per socket, and counts
// reordering as it really leaves: a data datagram sent after one of its
// flow with a higher id.
func (p *pipe) send(batch []*packet, msgs []udpio.Message) []udpio.Message {
	for i := 0; i < len(batch); {
		conn := batch[i].conn
		msgs = msgs[:0]
		for ; i < len(batch) && batch[i].conn == conn; i++ {
			pk := batch[i]
			if pk.id > 0 && pk.seq != nil {
				if pk.id < pk.seq.max {
					p.reordered.Add(1)
				}
				pk.seq.max = max(pk.seq.max, pk.id)
			}
			if pk.corrupt && len(pk.buf) > 0 {
				pk.buf[len(pk.buf)-1] ^= 0x01
			}
			for range pk.copies {
				msgs = append(msgs, udpio.Message{Buf: pk.buf, Addr: pk.to})
			}
		}
		for off := 0; off < len(msgs); {
			n, err := conn.WriteBatch(msgs[off:])
			off += n
			if err != nil {
				p.sendErrors.Add(1)
				off++ // skip the datagram that failed
			}
		}
	}
	return msgs
}

// snapshot returns the counters so far.
func (p *pipe) snapshot() Counts {
	p.mu.Lock()
	c := p.counts.Counts
	c.MaxGapMS = float64(p.maxGap) / 1e6
	p.mu.Unlock()
	c.Data.Reordered = p.reordered.Load()
	c.SendErrors = p.sendErrors.Load()
	c.DroppedBy = map[string]int64{}
	for r, n := range p.counts.droppedBy {
		if n > 0 {
			c.DroppedBy[model.ReasonNames[r]] = n
		}
	}
	return c
}
