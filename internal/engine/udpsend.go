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
const DefaultSendBatch = 64

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
	// fell more than pacer.StallFloor behind and caught up in a burst;
	// StallsComplete is false when there were more than the pacer keeps.
	Stalls         []time.Duration
	StallsComplete bool
	// Errors counts datagrams the socket refused; they were not sent and
	// used no id.
	Errors  int64
	LastErr error
}

// maxRefused ends a send after this many datagrams were refused: each
// refusal is an ICMP port-unreachable from the peer, so nothing listens on
// its port (the kernel reports one per ICMP message, so refusals and
// successful sends alternate).
const maxRefused = 5

// SendUDP sends paced datagrams on conn until the duration or byte count is
// reached or ctx is done. It keeps c up to date while it runs. It returns an
// error only when sending could not go on (for example the peer's port is
// closed); the result then holds what was sent until then.
func SendUDP(ctx context.Context, conn udpio.Conn, cfg UDPSendConfig, c *stats.Counters) (UDPSendResult, error) {
	if cfg.Clock == nil {
		cfg.Clock = pacer.SystemClock{}
		// Precise short sleeps block this thread: keep the sender on it.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pacer.TuneThread()
	}
	batch := cfg.Batch
	if batch <= 0 {
		batch = DefaultSendBatch
	}
	if cfg.Duration <= 0 && cfg.Bytes <= 0 {
		return UDPSendResult{}, errors.New("udp send: neither a duration nor a byte count was given")
	}
	msgs := make([]udpio.Message, batch)
	for i := range msgs {
		msgs[i].Buf = append([]byte(nil), cfg.Template...)
		msgs[i].Addr = cfg.Dst
	}
	p := pacer.New(cfg.Clock, cfg.PPS)
	res := UDPSendResult{Start: p.Start(), NextID: cfg.FirstID}
	end := res.Start.Add(cfg.Duration)
	refused := 0
	size := int64(len(cfg.Template))
	for ctx.Err() == nil {
		now := cfg.Clock.Now()
		if cfg.Duration > 0 && !now.Before(end) {
			break
		}
		if cfg.Bytes > 0 && res.Bytes >= cfg.Bytes {
			break
		}
		n := p.Due(now, batch)
		if cfg.Bytes > 0 {
			if left := (cfg.Bytes - res.Bytes + size - 1) / size; int64(n) > left {
				n = int(left)
			}
		}
		if n == 0 {
			wait := p.Gather(batch, GatherWindow)
			if cfg.Duration > 0 && end.Before(wait) {
				wait = end
			}
			_ = cfg.Clock.Sleep(ctx, wait.Sub(now))
			continue
		}
		for i := 0; i < n; i++ {
			cfg.Stamp(msgs[i].Buf, res.NextID+int64(i), now)
		}
		sent, err := conn.WriteBatch(msgs[:n])
		if sent > 0 {
			if res.First.IsZero() {
				res.First = now
			}
			res.Last = now
		}
		res.Packets += int64(sent)
		res.Bytes += int64(sent) * size
		res.NextID += int64(sent)
		c.Packets.Store(res.Packets)
		c.Bytes.Store(res.Bytes)
		if err != nil {
			res.Errors += int64(n - sent)
			res.LastErr = err
			c.Errors.Store(res.Errors)
			if errors.Is(err, syscall.ECONNREFUSED) {
				if refused++; refused >= maxRefused {
					res.End = cfg.Clock.Now()
					res.MaxLag = p.MaxLag()
					res.Stalls, res.StallsComplete = p.Stalls()
					return res, fmt.Errorf("sending udp: the peer answered %d times that its port is closed (is the server running?): %w", refused, err)
				}
			}
		}
	}
	res.End = cfg.Clock.Now()
	res.MaxLag = p.MaxLag()
	res.Stalls, res.StallsComplete = p.Stalls()
	return res, nil
}
