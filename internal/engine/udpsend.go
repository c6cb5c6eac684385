package engine

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
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
		// to hand one back after each (package pacer, HoldP).
		if rt.RealTime && runtime.GOMAXPROCS(0) >= 2 {
			clock = pacer.SystemClock{HoldP: true}
		}
	}
	// The schedules start once every batch is ready: copying the
	// templates takes milliseconds, which would make the first datagram
	// late and every rate measured from it high.
	for _, l := range lanes {
		l.p = pacer.New(clock, l.Config.PPS)
		l.res = UDPSendResult{Start: l.p.Start(), NextID: l.Config.FirstID}
		l.end = l.res.Start.Add(l.Config.Duration)
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
			w, ok := l.step(now)
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
func (l *lane) step(now time.Time) (wake time.Time, ok bool) {
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
		if !wait.After(now) {
			return time.Time{}, true // due by the next look
		}
		return wait, true
	}
	for i := 0; i < n; i++ {
		cfg.Stamp(l.msgs[i].Buf, res.NextID+int64(i), now)
	}
	sent, err := l.Conn.WriteBatch(l.msgs[:n])
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
			return fmt.Errorf("sending udp: the peer answered %d times that its port is closed (is the server running?): %w", l.refused, err)
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
	l.res.MaxLag = l.p.MaxLag()
	var complete bool
	l.res.Stalls, complete = l.p.Stalls()
	l.res.StallsCut = !complete
}
