package engine

import (
	"context"
	"errors"
	"net"
	"os"
	"time"

	"github.com/wirebench/wirebench/internal/udpio"
)

// UDPHandler is called for every datagram read. It returns false to stop
// the receive loop. m.Buf[:m.N] is only valid during the call.
type UDPHandler func(m *udpio.Message) bool

// UDPReceiveConfig tunes ReceiveUDP. The zero value is valid.
type UDPReceiveConfig struct {
	// BufSize is the largest datagram taken whole (default 65536); larger
	// ones arrive truncated.
	BufSize int
	// Batch is how many datagrams one read may return (default 32).
	Batch int
	// Idle ends the loop when nothing arrived for this long (0 = never).
	Idle time.Duration
	// Tick, with OnTick, wakes the loop at least this often even when
	// nothing arrives; OnTick returning false ends the loop.
	Tick   time.Duration
	OnTick func(now time.Time) bool
	// OnBatch, if set, is called after the handler has seen every
	// datagram of one read, so that replies the handler queued go out in
	// one send per read rather than one per datagram.
	OnBatch func()
	// AfterRead, if set, is called after every read once its datagrams
	// were handled (after OnBatch), with how many it returned: 0 when the
	// read ended at its deadline or failed.
	AfterRead func(n int)
	// Quick, if set and returning true before a read, makes that read wait
	// at most QuickWait for a datagram (still no longer than Tick or Idle
	// would), so that AfterRead comes soon even when nothing arrives.
	Quick func() bool
}

// QuickWait is how long a read waits when UDPReceiveConfig.Quick asks.
const QuickWait = time.Millisecond

// ReceiveUDP reads datagrams from conn in batches and hands each to h until
// h or OnTick returns false, ctx is done, or the idle time passes. It returns
// nil on those normal ends and the socket's error otherwise.
func ReceiveUDP(ctx context.Context, conn udpio.Conn, cfg UDPReceiveConfig, h UDPHandler) error {
	if cfg.BufSize <= 0 {
		cfg.BufSize = 65536
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 32
	}
	msgs := make([]udpio.Message, cfg.Batch)
	for i := range msgs {
		msgs[i].Buf = make([]byte, cfg.BufSize)
	}
	// Unblock a pending read when ctx ends.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	lastRx := time.Now()
	for {
		now := time.Now()
		var deadline time.Time
		if cfg.Idle > 0 {
			deadline = lastRx.Add(cfg.Idle)
		}
		if cfg.Tick > 0 && (deadline.IsZero() || now.Add(cfg.Tick).Before(deadline)) {
			deadline = now.Add(cfg.Tick)
		}
		if cfg.Quick != nil && cfg.Quick() && (deadline.IsZero() || now.Add(QuickWait).Before(deadline)) {
			deadline = now.Add(QuickWait)
		}
		// Set the deadline, then look at ctx: a cancellation before the
		// look is seen here, and one after it runs the AfterFunc after
		// this deadline was set, so its past deadline is the one left.
		// Looking first would let this deadline (zero with no Idle or
		// Tick) replace the AfterFunc's and the read block for good.
		_ = conn.SetReadDeadline(deadline)
		if ctx.Err() != nil {
			return nil
		}
		n, err := conn.ReadBatch(msgs)
		if n > 0 {
			lastRx = time.Now()
		}
		for i := 0; i < n; i++ {
			if !h(&msgs[i]) {
				if cfg.OnBatch != nil {
					cfg.OnBatch()
				}
				return nil
			}
		}
		if n > 0 && cfg.OnBatch != nil {
			cfg.OnBatch()
		}
		if cfg.AfterRead != nil {
			cfg.AfterRead(n)
		}
		if err == nil {
			continue
		}
		switch {
		case ctx.Err() != nil, errors.Is(err, net.ErrClosed):
			return nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			now := time.Now()
			if cfg.OnTick != nil && !cfg.OnTick(now) {
				return nil
			}
			if cfg.Idle > 0 && now.Sub(lastRx) >= cfg.Idle {
				return nil
			}
		case isTransientRead(err):
		default:
			return err
		}
	}
}
