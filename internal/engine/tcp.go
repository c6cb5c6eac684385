package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"time"

	"github.com/wirebench/wirebench/internal/stats"
)

// TCPSendConfig is what SendTCP writes.
type TCPSendConfig struct {
	// Buffer is written again and again (a dialect that wants a header at
	// the start of every write puts it in the buffer once).
	Buffer []byte
	// Duration bounds the test; Bytes, when positive, ends it after that
	// many bytes. One of them must be set.
	Duration time.Duration
	Bytes    int64
	// Counted is how many bytes were already sent on the stream (a header);
	// the counters include them, the result does not.
	Counted int64
}

// TCPResult is what a TCP sender or receiver moved.
type TCPResult struct {
	Bytes      int64
	Writes     int64
	Start, End time.Time
}

// SendTCP writes to conn until the duration or byte count is reached or ctx
// is done. A write cut short by the end of the duration is a normal end.
// It returns an error when the peer went away or the write failed; the
// result then holds what was written until then.
func SendTCP(ctx context.Context, conn net.Conn, cfg TCPSendConfig, c *stats.Counters) (TCPResult, error) {
	if cfg.Duration <= 0 && cfg.Bytes <= 0 {
		return TCPResult{}, errors.New("tcp send: neither a duration nor a byte count was given")
	}
	res := TCPResult{Start: time.Now()}
	if cfg.Duration > 0 {
		_ = conn.SetWriteDeadline(res.Start.Add(cfg.Duration))
		defer conn.SetWriteDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	var err error
	for ctx.Err() == nil {
		b := cfg.Buffer
		if cfg.Bytes > 0 {
			left := cfg.Bytes - res.Bytes
			if left <= 0 {
				break
			}
			if int64(len(b)) > left {
				b = b[:left]
			}
		}
		var n int
		n, err = conn.Write(b)
		res.Bytes += int64(n)
		res.Writes++
		c.Bytes.Store(cfg.Counted + res.Bytes)
		if err != nil {
			break
		}
	}
	res.End = time.Now()
	if err != nil && (ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded)) {
		err = nil
	}
	if err != nil {
		return res, err
	}
	return res, nil
}

// ReceiveTCP reads from r until EOF, ctx is done, or nothing arrives for
// idle (0 = no limit), counting into c. first, when not nil, is data read
// before (a header) that counts as received. An EOF or a reset by a peer
// that finished is a normal end; other errors are returned with the counts.
func ReceiveTCP(ctx context.Context, conn net.Conn, bufSize int, idle time.Duration, first []byte, c *stats.Counters) (TCPResult, error) {
	res := TCPResult{Start: time.Now(), Bytes: int64(len(first))}
	c.Bytes.Store(res.Bytes)
	buf := make([]byte, bufSize)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var err error
	for {
		if idle > 0 {
			_ = conn.SetReadDeadline(time.Now().Add(idle))
		}
		var n int
		n, err = conn.Read(buf)
		res.Bytes += int64(n)
		if n > 0 {
			res.End = time.Now()
			c.Bytes.Store(res.Bytes)
		}
		if err != nil {
			break
		}
	}
	if res.End.IsZero() {
		res.End = time.Now()
	}
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return res, nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return res, ErrIdle
	}
	return res, err
}

// ErrIdle says a receiver stopped because nothing arrived for its idle
// timeout.
var ErrIdle = errors.New("nothing received within the idle timeout")
