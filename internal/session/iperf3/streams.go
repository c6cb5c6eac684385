package iperf3

import (
	"crypto/rand"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// iperf3 timing: how long one control step may take before the test is
// given up, and how long a sender waits after its last write before it ends
// the test, so the receiver has read what is still in flight (iperf3 stops
// counting at TEST_END and would miss it).
const (
	i3StepTimeout  = 10 * time.Second
	i3DefaultUDP   = 1460 // iperf3's fallback datagram length
	i3DefaultRate  = 1_000_000
	i3StreamsLimit = i3wire.MaxStreams
)

// i3StreamID returns the iperf3 id of the k-th stream (0-based): 1, 3, 4, 5, …
func i3StreamID(k int) int64 {
	if k == 0 {
		return 1
	}
	return int64(k) + 2
}

// i3Stamp returns the stamper that writes iperf3's UDP header.
func i3Stamp(c64 bool) engine.Stamper {
	return func(b []byte, id int64, now time.Time) {
		h := i3wire.UDPHeader{Sec: uint32(now.Unix()), Usec: uint32(now.Nanosecond() / 1000), Seq: uint64(id)}
		_, _ = h.Put(b, c64)
	}
}

// i3Payload returns n random bytes (iperf3 sends random payload).
func i3Payload(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// i3UDPRecv is one received iperf3 UDP stream. The reader goroutine feeds
// it and publishes its counts once per read (publish); the test reads its
// totals at the end; the mutex keeps the two apart.
type i3UDPRecv struct {
	mu      sync.Mutex
	rx      *stats.UDPReceiver
	c64     bool
	stopped bool
	bad     int64
	pending bool // fed since the last publish
	// hi is the highest sequence number seen, extended past 32 bits
	// (extendSeq32) when the counters are 32-bit; 0 before any.
	hi int64
}

// extendSeq32 returns the 64-bit sequence number that a 32-bit one, seq,
// stands for, given hi, the highest seen (0: none yet): the one nearest
// hi of those whose low 32 bits are seq, as RTP receivers extend their
// 16-bit numbers (RFC 3550, appendix A.1). An iperf3 sender with 32-bit
// counters wraps them after 2^32 datagrams (about 8 hours at 150,000
// datagrams/s); without this every id after the wrap counts as a late one
// from the start and the loss goes negative. It returns 0 or less for a
// number that can only lie before the first id.
func extendSeq32(hi int64, seq uint32) int64 {
	const wrap = 1 << 32
	if hi == 0 {
		return int64(seq)
	}
	c := hi&^(wrap-1) | int64(seq)
	switch {
	case c-hi > wrap/2:
		c -= wrap
	case hi-c > wrap/2:
		c += wrap
	}
	return c
}

func newI3UDPRecv(c64 bool) *i3UDPRecv {
	return &i3UDPRecv{rx: stats.NewUDPReceiver(firstSeq()), c64: c64}
}

// testSeqBase, set by tests only, is added to the sequence number every
// UDP stream of this process sends first and expects first (1 on the
// wire): from just below 2^32 a test crosses the 32-bit wrap in a few
// datagrams rather than hours.
var testSeqBase atomic.Int64

// firstSeq is the sequence number of a UDP stream's first datagram.
func firstSeq() int64 { return 1 + testSeqBase.Load() }

// feed accounts for one datagram; short ones and the 4-byte connect
// messages are not data. It reports whether this is the first datagram
// since the last publish: the reader then owes this stream a publish at
// the read's end.
func (u *i3UDPRecv) feed(b []byte, at time.Time) (first bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped {
		return false
	}
	first = !u.pending
	u.pending = true
	h, err := i3wire.DecodeUDPHeader(b, u.c64)
	seq := int64(h.Seq)
	if err == nil && !u.c64 {
		seq = extendSeq32(u.hi, uint32(h.Seq))
	}
	if err != nil || seq <= 0 || h.Seq > 1<<62 {
		if len(b) != 4 {
			u.bad++
		}
		return
	}
	u.hi = max(u.hi, seq)
	var sent time.Time
	if h.Sec != 0 || h.Usec != 0 {
		sent = time.Unix(int64(h.Sec), int64(h.Usec)*1000)
	}
	u.rx.Datagram(seq, len(b), at, sent)
	return first
}

// publish makes the stream's counters (what intervals read) show every
// datagram fed so far.
func (u *i3UDPRecv) publish() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.publishLocked()
}

// publishLocked is publish with u.mu held.
func (u *i3UDPRecv) publishLocked() {
	u.rx.Publish()
	u.rx.C.Errors.Store(u.bad)
	u.pending = false
}

// i3UDPTotals is a UDP receiver's final figures.
type i3UDPTotals struct {
	bytes, received, maxSeq, lost, ooo, dups, bad int64
	jitter                                        time.Duration
	first, last                                   time.Time
}

// stop ends the counting and returns the totals.
func (u *i3UDPRecv) stop() i3UDPTotals {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.stopped = true
	u.publishLocked()
	s := u.rx.Seq
	t := i3UDPTotals{bytes: u.rx.Bytes(), received: s.Received(), lost: s.Lost(), ooo: s.OutOfOrder(), dups: s.Duplicates(),
		bad: u.bad, jitter: u.rx.Jitter.Value(), first: u.rx.FirstArrival(), last: u.rx.LastArrival()}
	if s.Started() {
		t.maxSeq = s.Max()
	}
	return t
}

// i3FlowIntervals splits per-stream intervals (flows named by stream id)
// into wirebench extension intervals.
func i3WBIntervals(ivs []result.Interval) map[int64][]i3wire.WBInterval {
	out := map[int64][]i3wire.WBInterval{}
	for _, in := range ivs {
		id, err := strconv.ParseInt(in.Flow, 10, 64)
		if err != nil {
			continue
		}
		out[id] = append(out[id], i3wire.WBInterval{Start: in.Start, End: in.End, Bytes: in.Bytes, Packets: in.Packets,
			Lost: in.Lost, OutOfOrder: in.OutOfOrder, Duplicates: in.Duplicates})
	}
	return out
}

// i3PeerReceiver sums the peer's results for the streams we sent on into
// receiver counts (Source "peer-report"), with the wirebench extension's
// duplicates and out-of-order counts when the peer sent them.
//
// With -O (omit > 0), iperf3 sends bytes without the omitted period but
// its UDP "packets" (the highest sequence number) and "errors" whole, and
// each side takes its own omitted count off: ours is the datagrams each
// stream sent in the period (omitted, by stream id). The loss
// in the period comes off only where a wirebench peer reported its
// intervals; the second result says some of it may be in Lost.
func i3PeerReceiver(res *i3wire.Results, ids []int64, udp bool, omit time.Duration, omitted map[string]result.Interval) (*result.Receiver, []*result.Receiver, bool, error) {
	sum := &result.Receiver{Source: "peer-report"}
	per := make([]*result.Receiver, len(ids))
	lossWhole := false
	for i, id := range ids {
		sr := res.Stream(id)
		if sr == nil {
			return nil, nil, false, fmt.Errorf("the peer's results have no stream %d", id)
		}
		rr := &result.Receiver{Bytes: sr.Bytes, Seconds: sr.EndTime - sr.StartTime, Source: "peer-report"}
		if udp {
			rr.Total, rr.Lost = sr.Packets, sr.Errors
			if omit > 0 {
				rr.Total = max(rr.Total-omitted[strconv.FormatInt(id, 10)].Packets, 0)
			}
			rr.JitterMS = sr.Jitter * 1000
		}
		wbIntervals := false
		if res.WB != nil {
			for _, w := range res.WB.Streams {
				if w.ID == id {
					rr.Duplicates, rr.OutOfOrder = result.Count(w.Duplicates), w.OutOfOrder
					rr.Intervals = i3PeerIntervals(w.Intervals)
					wbIntervals = true
				}
			}
		}
		if udp && omit > 0 {
			if wbIntervals {
				for _, in := range rr.Intervals {
					if in.End <= omit.Seconds()+1e-3 {
						rr.Lost -= in.Lost
					}
				}
				rr.Lost = max(rr.Lost, 0)
			} else if rr.Lost > 0 {
				lossWhole = true
			}
		}
		if udp {
			rr.Packets = max(rr.Total-rr.Lost, 0)
		}
		i3Rates(rr, udp)
		per[i] = rr
		session.SumReceiver(sum, rr)
	}
	if !udp {
		sum.PacketsPerSecond = 0
	}
	sum.Intervals = sumIntervals(per)
	return sum, per, lossWhole, nil
}

// i3PeerIntervals turns a wirebench peer's receiver intervals into ours.
func i3PeerIntervals(ws []i3wire.WBInterval) []result.Interval {
	var out []result.Interval
	for _, w := range ws {
		in := result.Interval{Start: w.Start, End: w.End, Bytes: w.Bytes, Packets: w.Packets, Lost: w.Lost, OutOfOrder: w.OutOfOrder, Duplicates: w.Duplicates}
		if secs := w.End - w.Start; secs > 0 {
			in.BitsPerSecond = float64(w.Bytes) * 8 / secs
		}
		out = append(out, in)
	}
	return out
}

// sumIntervals adds the streams' receiver intervals index by index; nil
// unless every stream has the same number of them.
func sumIntervals(per []*result.Receiver) []result.Interval {
	if len(per) == 0 || len(per[0].Intervals) == 0 {
		return nil
	}
	out := append([]result.Interval(nil), per[0].Intervals...)
	for _, rr := range per[1:] {
		if len(rr.Intervals) != len(out) {
			return nil
		}
		for i, in := range rr.Intervals {
			out[i].Bytes += in.Bytes
			out[i].Packets += in.Packets
			out[i].Lost += in.Lost
			out[i].OutOfOrder += in.OutOfOrder
		}
	}
	for i := range out {
		if secs := out[i].End - out[i].Start; secs > 0 {
			out[i].BitsPerSecond = float64(out[i].Bytes) * 8 / secs
		}
	}
	return out
}

// i3Rates fills a receiver's rates.
func i3Rates(rr *result.Receiver, udp bool) { session.SetReceiverRates(rr, udp) }

// i3LocalReceiver turns a UDP receiver's totals into receiver counts.
// conn is the socket it received on (nil when unknown).
func i3LocalReceiver(t i3UDPTotals, start, end time.Time, conn udpio.Conn) *result.Receiver {
	rr := &result.Receiver{Bytes: t.bytes, Packets: t.received, Lost: t.lost, OutOfOrder: t.ooo, Duplicates: result.Count(t.dups),
		JitterMS: float64(t.jitter) / 1e6, Total: t.maxSeq, Seconds: end.Sub(start).Seconds(), Source: "local"}
	if conn != nil {
		rr.JitterMethod = session.JitterMethod(conn.Capabilities().GRO)
	}
	i3Rates(rr, true)
	return rr
}

// i3Flows builds one engine flow per stream, named by its id, for the
// per-stream intervals (iperf3 -J intervals and the wb_ extension).
func i3Flows(ids []int64, cs []*stats.Counters) []*engine.Flow {
	fl := make([]*engine.Flow, len(ids))
	for i := range ids {
		fl[i] = &engine.Flow{Name: strconv.FormatInt(ids[i], 10), Counters: []*stats.Counters{cs[i]}}
	}
	return fl
}

// directionFlows makes the interval flows of a test: the client-to-server
// direction first. Each side that has streams is a flow; with both, they
// are named "forward" and "reverse". forwardSends says this side sends the
// forward streams (the client) rather than the reverse ones (the server):
// the sending flow's intervals carry no receiver figures.
func directionFlows(forward, reverse []*stats.Counters, forwardSends bool) []*engine.Flow {
	var flows []*engine.Flow
	if len(forward) > 0 {
		flows = append(flows, &engine.Flow{Counters: forward, Sender: forwardSends})
	}
	if len(reverse) > 0 {
		flows = append(flows, &engine.Flow{Counters: reverse, Sender: !forwardSends})
	}
	if len(flows) == 2 {
		flows[0].Name, flows[1].Name = "forward", "reverse"
	}
	return flows
}

// omitStreamResults takes the omitted period out of the per-stream results
// we send an iperf3 peer, as iperf3 3.12 does when the period ends: the
// bytes each stream counted in the omitted period come
// off, and its times run from the end of the period. UDP "packets" and
// "errors" stay whole, as iperf3 sends them: the peer takes its own
// omitted count off. per holds the streams' omitted counts by id.
func omitStreamResults(res *i3wire.Results, per map[string]result.Interval, omit time.Duration) {
	if omit <= 0 {
		return
	}
	secs := omit.Seconds()
	for i := range res.Streams {
		sr := &res.Streams[i]
		o := per[strconv.FormatInt(sr.ID, 10)]
		sr.Bytes = max(sr.Bytes-o.Bytes, 0)
		sr.StartTime = max(sr.StartTime-secs, 0)
		sr.EndTime = max(sr.EndTime-secs, 0)
	}
}
