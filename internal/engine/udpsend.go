package engine

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/pacer"
	"github.com/wirebench/wirebench/internal/priority"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
)

// Stamper writes a datagram's per-packet header (sequence id and send
// time) into b, which already holds the rest of the payload.
type Stamper func(b []byte, id int64, now time.Time)

// UDPSendConfig is what SendUDP sends.
type UDPSendConfig struct {
	// Template is one datagram's payload; every datagram is a copy of it
	// with Stamp applied. Its length is the datagram length.
	Template []byte
	Stamp    Stamper
	// PPS is the rate in datagrams per second; 0 sends as fast as the
	// socket takes them.
	PPS float64
	// Duration bounds the test; Bytes, when positive, ends it once that
	// many payload bytes were sent. One of them must be set.
	Duration time.Duration
	Bytes    int64
	// FirstID is the sequence id of the first datagram; ids then count up
	// by one per datagram actually sent.
	FirstID int64
	// Dst is the destination; the zero value on a connected socket.
	Dst netip.AddrPort
	// Batch is the most datagrams handed to the socket at once (default
	// DefaultSendBatch). At rates above one datagram per GatherWindow the
	// sender waits until a batch is due rather than wake for every
	// datagram.
	Batch int
	Clock pacer.Clock
}

// DefaultSendBatch is UDPSendConfig.Batch's default: one UDP_SEGMENT packet
// of up to 64 datagrams, or one sendmmsg of 64.
const DefaultSendBatch = 256

// GatherWindow is the longest a paced datagram waits for others to join its
// batch (see pacer.Gather): about what a thread's wake-up costs, so only
// rates too high to wake once per datagram are batched.
const GatherWindow = 50 * time.Microsecond

// GSOWorthwhile says whether a sender of pps datagrams per second (0 =
// unpaced) gains from UDP segmentation offload: only when batches form on
// their own, at rates where datagrams are due less than GatherWindow apart.
// Below that each datagram leaves alone, and GSO would only coalesce the
// catch-up bursts of a sender that fell behind, which a dropping qdisc
// then counts as one drop each.
func GSOWorthwhile(pps float64) bool {
	return pps <= 0 || pps >= float64(time.Second/GatherWindow)
}

// OfferedRate returns the datagrams per second actually offered: the
// datagrams after the first over the time from the first send to the last
// (N datagrams span N−1 gaps). It is 0 with fewer than two datagrams.
func (r UDPSendResult) OfferedRate() float64 {
	if r.Packets < 2 || !r.Last.After(r.First) {
		return 0
	}
	return float64(r.Packets-1) / r.Last.Sub(r.First).Seconds()
}

// UDPSendResult is what SendUDP did.
type UDPSendResult struct {
	Packets, Bytes int64
	// NextID is the id the next datagram would have carried: FirstID +
	// Packets.
	NextID     int64
	Start, End time.Time
	// First and Last are when the first and the last datagram were handed
	// to the socket (zero before any was sent).
	First, Last time.Time
	// MaxLag is the furthest the sender fell behind its schedule.
	MaxLag time.Duration
	// Stalls are the deepest lags of the episodes in which the sender
	// fell more than pacer.StallFloor behind and caught up in a burst
	// (the first 4,096: pacer.Stalls); StallsCut says there were more.
	Stalls    []time.Duration
	StallsCut bool
	// Errors counts datagrams the socket refused; they were not sent and
	// used no id.
	Errors  int64
	LastErr error
	// Pacing is the scheduling the sender's thread got (zero for an
	// unpaced send or a test clock).
	Pacing priority.Pacing
	// Behind splits the time this stream was behind its schedule (see
	// Behind); only for a paced stream.
	Behind Behind
}

// heldP counts the senders whose sleeps keep their processor.
var heldP atomic.Int32

// holdP takes one of the GOMAXPROCS-1 processors senders may keep, and
// says whether it could (then heldP.Add(-1) gives it back).
func holdP() bool {
	if heldP.Add(1) <= int32(runtime.GOMAXPROCS(0)-1) {
		return true
	}
	heldP.Add(-1)
	return false
}

// paced says whether any lane keeps a schedule.
func paced(lanes []*lane) bool {
	for _, l := range lanes {
		if l.Config.PPS > 0 {
			return true
		}
	}
	return false
}

// Behind is where the time a paced sender spent behind its schedule went.
// A send call on a socket whose send buffer is full waits until the
// buffer drains: the buffer holds our datagrams until this host's egress
// queue (its qdisc, a shaper, the interface) passes them on, so time
// behind schedule spent inside send calls is this host's egress queue
// holding the sender back: the link, or a shaper on it, is slower than the
// rate asked, and the wire stayed busy. Time behind schedule outside send
// calls is time the sender's thread was not sending when it should have
// been: it was not running (the CPU went elsewhere) or woke late from a
// sleep. Only that can leave the egress queue empty and the wire idle.
//
// A thread that waits for a CPU inside a send call is not held back by
// the queue, though: where the kernel keeps the thread's run delay (Linux
// schedstat), it is read around each send call made more than 1 ms
// (pacer.StallFloor) behind schedule (a reading costs a system call; a
// sender held back is soon far behind), and
// InSendRunDelay is the part of InSend the thread was ready to run but had
// no CPU, beyond 1 ms per call (cpuWaitFloor). It counts as a stall.
type Behind struct {
	// InSend is the time behind schedule spent inside send calls (of any
	// stream of the thread); Stalled the time behind schedule outside
	// them, less 1 ms (pacer.StallFloor) of each stretch (a paced
	// sender's every wake from a sleep is some tens of µs late, which
	// costs no rate), and MaxStall the longest such stretch, whole.
	InSend, Stalled, MaxStall time.Duration
	// InSendRunDelay is the part of InSend the thread waited for a CPU;
	// RunDelayKnown says it could be read (Linux, the system clock).
	InSendRunDelay time.Duration
	RunDelayKnown  bool
	// HeldPackets is the datagrams handed over between the end of the
	// first and of the last send call that ended more than
	// pacer.StallFloor behind schedule (a sender is behind only once its
	// socket's buffer is full, the sends before take datagrams at once), and
	// HeldSpan the time between them. Each such call returned once the
	// egress queue had taken its datagrams, so the socket's buffer was
	// about as full at both ends: HeldPackets over HeldSpan is the rate
	// the queue passed on, without the datagrams that filled the buffer
	// and the queue at the start (which make the whole test's offered
	// rate higher than the link's).
	HeldPackets int64
	HeldSpan    time.Duration
	heldFrom    time.Time
	heldAt      int64
	// sum says b is a sum of streams (Add), and heldRate their held
	// rates summed.
	sum      bool
	heldRate float64
}

// HeldRate is the datagrams per second the egress queue took while it held
// the sender back (HeldPackets over HeldSpan; for a sum of streams, the
// sum of theirs), 0 when unknown.
func (b Behind) HeldRate() float64 {
	if b.sum {
		return b.heldRate
	}
	if b.HeldSpan <= 0 {
		return 0
	}
	return float64(b.HeldPackets) / b.HeldSpan.Seconds()
}

// Add adds the figures of another stream's o into b, a sum of streams:
// times add up, the longest stall is the longer, held rates add up (each
// stream's own datagrams over its own held stretch).
func (b *Behind) Add(o Behind) {
	if !b.sum {
		*b = Behind{sum: true, heldRate: b.HeldRate(), InSend: b.InSend, Stalled: b.Stalled, MaxStall: b.MaxStall,
			InSendRunDelay: b.InSendRunDelay, RunDelayKnown: b.RunDelayKnown, HeldPackets: b.HeldPackets, HeldSpan: b.HeldSpan}
	}
	b.heldRate += o.HeldRate()
	b.InSend += o.InSend
	b.Stalled += o.Stalled
	b.MaxStall = max(b.MaxStall, o.MaxStall)
	b.InSendRunDelay += o.InSendRunDelay
	b.RunDelayKnown = b.RunDelayKnown || o.RunDelayKnown
	b.HeldPackets += o.HeldPackets
	b.HeldSpan = max(b.HeldSpan, o.HeldSpan)
}

// QueueHeld says whether b is the mark of a sender held back by this
// host's egress queue rather than stalled, for a sender that ended deficit
// behind its schedule after sending for span: its wait inside send calls
// (less the part it waited for a CPU) covers the deficit, and the time it
// stalled, in which the queue may have run empty (Stalled and
// InSendRunDelay), is at most a hundredth of span, so the queue, and the
// wire after it, stayed busy all but that fraction of the time.
func (b Behind) QueueHeld(span, deficit time.Duration) bool {
	return span > 0 && deficit > 0 && b.InSend-b.InSendRunDelay >= deficit && (b.Stalled+b.InSendRunDelay)*100 <= span
}

// maxRefused ends a send after this many datagrams were refused: each
// refusal is an ICMP port-unreachable from the peer, so nothing listens on
// its port (the kernel reports one per ICMP message, so refusals and
// successful sends alternate).
const maxRefused = 5

// RefusedFor ends a send whose every write failed for this long, however
// it is bounded (duration, bytes or packets): a firewall's EPERM, an
// ENETUNREACH or an EMSGSIZE refuses each datagram in turn, and a send
// that counts only the datagrams that went out would otherwise never reach
// its byte count. One datagram accepted starts the count again, so a
// queue that is full now and then (ENOBUFS) does not end a send.
const RefusedFor = time.Second

// SendUDP sends paced datagrams on conn until the duration or byte count is
// reached or ctx is done. It keeps c up to date while it runs. It returns an
// error only when sending could not go on (for example the peer's port is
// closed); the result then holds what was sent until then.
func SendUDP(ctx context.Context, conn udpio.Conn, cfg UDPSendConfig, c *stats.Counters) (UDPSendResult, error) {
	res, errs := SendUDPStreams(ctx, []UDPStream{{Conn: conn, Config: cfg, Counters: c}})
	return res[0], errs[0]
}

// UDPStream is one stream of SendUDPStreams: its socket, what it sends and
// the counters it keeps up to date.
type UDPStream struct {
	Conn     udpio.Conn
	Config   UDPSendConfig
	Counters *stats.Counters
}

// maxBatchBytes bounds the datagram copies a stream's batch holds: a batch
// of the largest datagrams is DefaultSendBatch's 64, still one GSO send.
const maxBatchBytes = 1 << 20

// lane is one stream's state while SendUDPStreams sends it.
type lane struct {
	UDPStream
	msgs    []udpio.Message
	p       *pacer.Pacer
	res     UDPSendResult
	err     error
	end     time.Time
	refused int
	// failing is when the writes began to fail, none accepted since (zero
	// while the last write sent something); failed counts those writes.
	failing time.Time
	failed  int64
	size    int64
	done    bool
	// due is when the lane means to send next (its next datagram's due
	// time, or later when it waits to gather a batch); acct is the time up
	// to which its time behind is accounted, acctSend the thread's
	// inSend then (see account).
	due      time.Time
	acct     time.Time
	acctSend time.Duration
	acctRun  time.Duration
	thread   *threadSend
}

// threadSend is the time the sending thread spent inside send calls, for
// all its streams, and of it the time it waited for a CPU (read from rd
// around the calls made behind schedule; rd nil when not available).
type threadSend struct {
	inSend, inSendRun time.Duration
	rd                *runDelayClock
	runAt             time.Duration // rd's reading before the current call
	reading           bool
}

// cpuWaitFloor is the wait for a CPU inside one send call that is taken
// not to have emptied this host's egress queue: a blocked UDP send wakes
// when half the socket's send buffer is free again, so the other half is
// still queued, and the system's default buffer (about 208 KiB of memory,
// some 90 datagrams of 1470 bytes) holds 5 ms of them at 100 Mbit/s and
// 1 ms at 1 Gbit/s. Only the part of a call's wait beyond it counts.
const cpuWaitFloor = pacer.StallFloor

// begin starts a send call, made more than pacer.StallFloor behind
// schedule when behind: only then is the run delay read around it.
func (t *threadSend) begin(behind bool) {
	t.reading = false
	if t.rd != nil && behind {
		t.runAt, t.reading = t.rd.read()
	}
}

// end ends a send call that lasted d.
func (t *threadSend) end(d time.Duration) {
	t.inSend += d
	if t.reading {
		if now, ok := t.rd.read(); ok && now-t.runAt > cpuWaitFloor {
			t.inSendRun += min(now-t.runAt-cpuWaitFloor, d)
		}
	}
}

// account splits the time l was behind schedule, from its last account
// until t, into time the thread spent inside send calls (any stream's)
// and time outside them.
func (l *lane) account(t time.Time) {
	from := l.acct
	if l.due.After(from) {
		from = l.due
	}
	if l.p != nil && l.Config.PPS > 0 && t.After(from) {
		span := t.Sub(from)
		in := min(span, l.thread.inSend-l.acctSend)
		b := &l.res.Behind
		b.InSend += in
		b.Stalled += max(span-in-pacer.StallFloor, 0)
		b.MaxStall = max(b.MaxStall, span-in)
		b.InSendRunDelay += min(in, l.thread.inSendRun-l.acctRun)
		b.RunDelayKnown = l.thread.rd != nil
	}
	l.acct, l.acctSend, l.acctRun = t, l.thread.inSend, l.thread.inSendRun
}

// SendUDPStreams sends several streams, each as SendUDP would, from the one
// calling goroutine (on one OS thread): each stream keeps its own schedule,
// and the thread wakes when the first of them has a batch due. Streams of
// one test that share this host's cores with the far end (loopback) cost
// one thread's wake-ups this way, not one per stream. All streams start
// now; their Clocks must be the same (nil: the system's). It returns each
// stream's result and error, in order.
func SendUDPStreams(ctx context.Context, streams []UDPStream) ([]UDPSendResult, []error) {
	results, errs := make([]UDPSendResult, len(streams)), make([]error, len(streams))
	clock := streams[0].Config.Clock
	locked := clock == nil
	if locked {
		clock = pacer.SystemClock{}
		// Precise short sleeps block this thread: keep the sender on it.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pacer.TuneThread()
	}
	lanes, block := newLanes(streams, errs)
	// A paced send on the real clock runs in the real-time class where
	// that is allowed, so that a busy host delays its wake-ups less
	// (bounded: see package priority).
	var rt *priority.Pacer
	if locked && paced(lanes) {
		rt = priority.PaceThread(block)
		defer rt.Release()
		// The sender's sleeps keep its processor: the Go scheduler
		// would otherwise need another thread, at the normal class,
		// to hand one back after each (package pacer, HoldP). At most
		// GOMAXPROCS-1 senders do, so the process's other goroutines
		// (its receivers) always have a processor.
		if rt.RealTime && holdP() {
			defer heldP.Add(-1)
			clock = pacer.SystemClock{HoldP: true}
		}
	}
	// The schedules start once every batch is ready: copying the
	// templates takes milliseconds, which would make the first datagram
	// late and every rate measured from it high.
	thread := &threadSend{}
	if streams[0].Config.Clock == nil {
		if rd, ok := openRunDelay(); ok {
			thread.rd = rd
			defer rd.close()
		}
	}
	for _, l := range lanes {
		l.p = pacer.New(clock, l.Config.PPS)
		l.res = UDPSendResult{Start: l.p.Start(), NextID: l.Config.FirstID}
		l.end = l.res.Start.Add(l.Config.Duration)
		l.due, l.acct, l.thread = l.res.Start, l.res.Start, thread
	}
	for ctx.Err() == nil {
		now := clock.Now()
		rt.Check(now)
		var wake time.Time
		active, sent := 0, false
		for _, l := range lanes {
			if l.done {
				continue
			}
			w, ok := l.step(clock, now)
			switch {
			case !ok:
				l.finish(clock)
			case w.IsZero():
				active++
				sent = true
			default:
				active++
				if wake.IsZero() || w.Before(wake) {
					wake = w
				}
			}
		}
		if active == 0 {
			break
		}
		if !sent {
			_ = clock.Sleep(ctx, wake.Sub(now))
		}
	}
	for _, l := range lanes {
		if !l.done {
			l.finish(clock)
		}
	}
	j := 0
	for i := range streams {
		if errs[i] != nil {
			continue
		}
		results[i], errs[i] = lanes[j].res, lanes[j].err
		if rt != nil {
			results[i].Pacing = rt.Pacing
		}
		j++
	}
	return results, errs
}

// newLanes makes a lane of each stream that can be sent (errs says why
// one cannot), with its batch of datagram copies. The copies of all lanes
// share one block, which a real-time sender locks in RAM.
func newLanes(streams []UDPStream, errs []error) (lanes []*lane, block []byte) {
	lanes = make([]*lane, 0, len(streams))
	for i, st := range streams {
		cfg := st.Config
		if cfg.Duration <= 0 && cfg.Bytes <= 0 {
			errs[i] = errors.New("udp send: neither a duration nor a byte count was given")
			continue
		}
		if cfg.Batch <= 0 {
			cfg.Batch = DefaultSendBatch
			if n := len(cfg.Template); n > 0 {
				cfg.Batch = min(cfg.Batch, max(64, maxBatchBytes/n))
			}
		}
		l := &lane{UDPStream: st, msgs: make([]udpio.Message, cfg.Batch), size: int64(len(cfg.Template))}
		l.Config = cfg
		lanes = append(lanes, l)
	}
	size := 0
	for _, l := range lanes {
		size += len(l.msgs) * len(l.Config.Template)
	}
	block = make([]byte, size)
	rest := block
	for _, l := range lanes {
		n := len(l.Config.Template)
		for j := range l.msgs {
			l.msgs[j].Buf, rest = rest[:n:n], rest[n:]
			copy(l.msgs[j].Buf, l.Config.Template)
			l.msgs[j].Addr = l.Config.Dst
		}
	}
	return lanes, block
}

// step sends what of l is due at now. It returns when l next wants to send
// (zero: it sent, look again at once), or ok=false when l is done: its
// duration or byte count reached, or its peer refused it.
func (l *lane) step(clock pacer.Clock, now time.Time) (wake time.Time, ok bool) {
	cfg, res := &l.Config, &l.res
	if cfg.Duration > 0 && !now.Before(l.end) || cfg.Bytes > 0 && res.Bytes >= cfg.Bytes {
		return time.Time{}, false
	}
	n := l.p.Due(now, cfg.Batch)
	if cfg.Bytes > 0 {
		if left := (cfg.Bytes - res.Bytes + l.size - 1) / l.size; int64(n) > left {
			n = int(left)
		}
	}
	if n == 0 {
		wait := l.p.Gather(cfg.Batch, GatherWindow)
		if cfg.Duration > 0 && l.end.Before(wait) {
			wait = l.end
		}
		l.due = wait
		if !wait.After(now) {
			return time.Time{}, true // due by the next look
		}
		return wait, true
	}
	for i := 0; i < n; i++ {
		cfg.Stamp(l.msgs[i].Buf, res.NextID+int64(i), now)
	}
	s := clock.Now()
	l.account(s)
	l.thread.begin(s.Sub(l.due) > pacer.StallFloor)
	sent, err := l.Conn.WriteBatch(l.msgs[:n])
	l.settle(clock, sent)
	if sent > 0 {
		if res.First.IsZero() {
			res.First = now
		}
		res.Last = now
	}
	res.Packets += int64(sent)
	res.Bytes += int64(sent) * l.size
	res.NextID += int64(sent)
	l.Counters.Packets.Store(res.Packets)
	l.Counters.Bytes.Store(res.Bytes)
	if err != nil {
		res.Errors += int64(n - sent)
		res.LastErr = err
		l.Counters.Errors.Store(res.Errors)
	}
	if l.err = l.refusal(now, sent, err); l.err != nil {
		return time.Time{}, false
	}
	return time.Time{}, true
}

// settle ends the accounting of a send call that started at l's last
// account and handed over sent datagrams: the call's time goes to the
// thread's time in send calls, l is due at its next datagram's time, and
// a call that ended behind schedule extends the held stretch (HeldSpan).
func (l *lane) settle(clock pacer.Clock, sent int) {
	e := clock.Now()
	l.thread.end(e.Sub(l.acct))
	l.due = l.p.Next()
	b := &l.res.Behind
	l.account(e)
	if e.Sub(l.due) > pacer.StallFloor { // the call ended behind schedule: the buffer was full
		packets := l.res.Packets + int64(max(sent, 0))
		if b.heldFrom.IsZero() {
			b.heldFrom, b.heldAt = e, packets
		}
		b.HeldPackets, b.HeldSpan = packets-b.heldAt, e.Sub(b.heldFrom)
	}
}

// refusal follows the writes that failed and returns the error that ends
// the send: the peer's port found closed maxRefused times, or no datagram
// accepted for RefusedFor. It returns nil while the send may go on.
func (l *lane) refusal(now time.Time, sent int, err error) error {
	if sent > 0 || err == nil {
		l.failing, l.failed = time.Time{}, 0
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		if l.refused++; l.refused >= maxRefused {
			return fmt.Errorf("sending udp: the peer answered %d times that its UDP port is closed (is the server running and listening for UDP, e.g. iperf -s -u?): %w", l.refused, err)
		}
		return nil
	}
	if sent > 0 {
		return nil
	}
	if l.failed++; l.failing.IsZero() {
		l.failing = now
	}
	if d := now.Sub(l.failing); d >= RefusedFor {
		return fmt.Errorf("sending udp: this host refused every datagram for %v (%d writes in a row, none sent; a firewall, or no route?): %w",
			d.Round(time.Millisecond), l.failed, err)
	}
	return nil
}

// finish closes l's result.
func (l *lane) finish(clock pacer.Clock) {
	l.done = true
	l.res.End = clock.Now()
	l.account(l.res.End)
	l.res.MaxLag = l.p.MaxLag()
	var complete bool
	l.res.Stalls, complete = l.p.Stalls()
	l.res.StallsCut = !complete
}
