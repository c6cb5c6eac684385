package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/stats"
)

// TCPSendConfig is what SendTCP writes.
type TCPSendConfig struct {
	// Buffer is written again and again (a dialect that wants a header at
	// the start of every write puts it in the buffer once).
	Buffer []byte
	// Duration bounds the test; Bytes, when positive, ends it after that
	// many bytes. One of them (or End) must be set.
	Duration time.Duration
	Bytes    int64
	// End, when set, is when the test's clock ends, in place of the
	// sender's start plus Duration: a session whose clock started before
	// this sender's goroutine ran (iperf3's TEST_RUNNING) ends its writes
	// with that clock, not later by however long the goroutine waited.
	End time.Time
	// Counted is how many bytes were already sent on the stream (a header);
	// the counters include them, the result does not.
	Counted int64
	// Blocking writes from a locked OS thread with the socket in blocking
	// mode (Linux, a plain TCP connection; elsewhere ignored) until shortly
	// before the end, where Go's poller takes over for the exact deadline.
	// The kernel then puts the sender to sleep and wakes it itself, as
	// iperf 2's threads; with two or more streams on loopback that was
	// faster and cheaper for the receiver (bench/README.md). Nothing else
	// may write to conn meanwhile, and a reader of it must tolerate
	// blocking reads of up to 50 ms each.
	Blocking bool
}

// TCPResult is what a TCP sender or receiver moved.
type TCPResult struct {
	Bytes      int64
	Writes     int64
	Start, End time.Time
	// First is when a receiver's first byte arrived (zero before any, and
	// for a sender): the peer's start and one trip across the path after
	// Start. On Linux it is the kernel's stamp of its arrival; elsewhere,
	// or without a stamp, the first read, late by as long as this host
	// was slow to wake the reader.
	First time.Time
}

// FirstByteSeconds is a receiver's time from Start to its first byte
// read, in seconds; 0 when nothing was read.
func (r TCPResult) FirstByteSeconds() float64 {
	if r.First.IsZero() {
		return 0
	}
	return r.First.Sub(r.Start).Seconds()
}

// SendTCP writes to conn until the duration or byte count is reached or ctx
// is done. No write runs past the end of the duration: each write has a
// deadline at that end, so a write blocked on a full socket buffer (a slow
// or stalled peer) returns there with the bytes the kernel took so far,
// which alone are counted, and that is a normal end, not an error. It
// returns an error when the peer went away or the write failed; the result
// then holds what was written until then.
func SendTCP(ctx context.Context, conn net.Conn, cfg TCPSendConfig, c *stats.Counters) (TCPResult, error) {
	if cfg.Duration <= 0 && cfg.Bytes <= 0 && cfg.End.IsZero() {
		return TCPResult{}, errors.New("tcp send: neither a duration, an end time nor a byte count was given")
	}
	res := TCPResult{Start: time.Now()}
	end := cfg.End
	if end.IsZero() && cfg.Duration > 0 {
		end = res.Start.Add(cfg.Duration)
	}
	if !end.IsZero() {
		if err := conn.SetWriteDeadline(end); err != nil {
			return res, fmt.Errorf("tcp send: setting the write deadline at the test's end: %w", err)
		}
		defer conn.SetWriteDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	var err error
	if cfg.Blocking {
		var done bool
		if done, err = sendBlocking(ctx, conn, cfg, c, &res, end); done {
			res.End = time.Now()
			return res, err
		}
	}
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
	return ReceiveTCPWith(ctx, conn, TCPReceiveConfig{BufSize: bufSize, Idle: idle, First: first}, c)
}

// TCPReceiveConfig is how ReceiveTCPWith reads.
type TCPReceiveConfig struct {
	// BufSize is the size of each read that copies (Copy, or where reads
	// cannot discard); a discarding read takes up to 1 MiB.
	BufSize int
	// Idle ends the receive when nothing arrives for that long (0 = no
	// limit); the time a Hold holds the receiver does not count.
	Idle time.Duration
	// First is data read before (a header) that counts as received.
	First []byte
	// Since, when set, is the receive's start: a time before which no
	// byte of it can have arrived (the connection accepted, the request
	// sent). Without it the receive starts when ReceiveTCPWith is
	// called, which a busy host may reach after bytes already queued. A
	// first byte the kernel stamped (First) as arriving before it moves
	// the start back to that arrival: a busy host's Accept returns late.
	Since time.Time
	// Hold, when not nil, can hold the receiver between reads.
	Hold *Hold
	// Copy reads the data into the buffer, as an application would. By
	// default a plain TCP connection on Linux is read with recv(MSG_TRUNC),
	// which counts the bytes without copying them out of the kernel: no
	// receiver here looks at them past the header, and the copy was most
	// of a receiver's CPU (bench/README.md).
	Copy bool
}

// ReceiveTCPWith is ReceiveTCP with a receiver that a Hold can pause.
func ReceiveTCPWith(ctx context.Context, conn net.Conn, cfg TCPReceiveConfig, c *stats.Counters) (TCPResult, error) {
	res := TCPResult{Start: cfg.Since, Bytes: int64(len(cfg.First))}
	if res.Start.IsZero() {
		res.Start = time.Now()
	}
	c.Bytes.Store(res.Bytes)
	var buf []byte
	var discard *discardReader
	if !cfg.Copy {
		discard = newDiscardReader(conn, cfg.Hold == nil)
		if discard != nil {
			defer discard.close()
		}
	}
	if discard == nil {
		buf = make([]byte, cfg.BufSize)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	hold := cfg.Hold
	if hold != nil {
		hold.add(conn)
		defer hold.remove(conn)
	}
	var err error
	var gen uint64 // the Hold's Pause count when the deadline was last cleared
	for {
		if hold != nil {
			// Wait out a pause, then clear the deadline it set; a Pause
			// after the clear sets it again and so cuts the read below
			// short, which the error check tells by the count.
			for {
				g := hold.wait(ctx)
				if g == gen || ctx.Err() != nil {
					break
				}
				_ = conn.SetReadDeadline(time.Time{})
				gen = g
			}
			if ctx.Err() != nil {
				break
			}
		}
		if at, set := readDeadline(cfg.Idle, discard); set {
			_ = conn.SetReadDeadline(at)
			if ctx.Err() != nil {
				break // this deadline may have replaced the AfterFunc's past one
			}
			if hold != nil {
				if g, _ := hold.state(); g != gen {
					continue // a Pause came before this deadline replaced its own
				}
			}
		}
		var n int
		if discard != nil {
			n, err = discard.Read()
		} else {
			n, err = conn.Read(buf)
		}
		res.Bytes += int64(n)
		if n > 0 {
			res.End = time.Now()
			if res.First.IsZero() {
				res.noteFirst(discard)
			}
			c.Bytes.Store(res.Bytes)
			if discard != nil {
				discard.observe(n, res.End)
			}
		}
		if err != nil {
			if discard != nil && errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil && discard.ticked() {
				err = nil // the low-water mark held data back too long: take it
				continue
			}
			if hold != nil && errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil {
				if g, _ := hold.state(); g != gen {
					err = nil // a Pause cut the read short: wait, then read on
					continue
				}
			}
			break
		}
	}
	if res.End.IsZero() {
		res.End = time.Now()
	}
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return res, nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return res, ErrIdle
	}
	return res, err
}

// StampArrivals returns a net.ListenConfig.Control that runs then (when
// not nil: the socket options) and asks the kernel to stamp the arrival
// of each segment the listener's connections receive, which they inherit.
// Bytes that arrive before a busy host's Accept returns are then timed
// from their arrival: a receiver's first read takes the first byte's
// stamp (TCPResult.First) and starts no later. Only a listener that asks
// gets stamps: asking when a receive begins would come too late.
func StampArrivals(then func(network, address string, c syscall.RawConn) error) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		if then != nil {
			if err := then(network, address, c); err != nil {
				return err
			}
		}
		if err := stampOn(c); err != nil {
			return fmt.Errorf("asking for arrival stamps: %w", err)
		}
		return nil
	}
}

// noteFirst sets First from the read that returned the first bytes, at
// End: the kernel's time of their arrival when d has it (a read late on a
// busy host is not), which moves Start back if it came before.
func (r *TCPResult) noteFirst(d *discardReader) {
	r.First = r.End
	if at, ok := d.arrival(r.End); ok {
		r.First = at
		if at.Before(r.Start) {
			r.Start = at
		}
	}
}

// readDeadline is the deadline of a receiver's next read: the idle
// timeout from now, or a discarding reader's sooner tick; set says whether
// to set it (false: leave none).
func readDeadline(idle time.Duration, discard *discardReader) (at time.Time, set bool) {
	if idle <= 0 && !discard.wantsDeadline() {
		return time.Time{}, false // no clock read per read when nothing needs one
	}
	now := time.Now()
	if idle > 0 {
		at, set = now.Add(idle), true
	}
	if discard != nil {
		at, set = discard.deadline(now, at)
	}
	return at, set
}

// ErrIdle says a receiver stopped because nothing arrived for its idle
// timeout.
var ErrIdle = errors.New("nothing received within the idle timeout")
