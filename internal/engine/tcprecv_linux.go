package engine

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/udpio"
)

// discardReader reads a TCP connection with recv(MSG_TRUNC): the kernel
// takes the bytes off the socket and counts them without copying them to
// user space (tcp_recvmsg skips the copy for that flag; iperf3's
// --skip-rx-copy does the same). A receiver that only counts bytes then
// costs the host no copy, which on loopback and fast links is most of a
// receiver's CPU. Deadlines and cancellation work as for conn.Read, since
// the wait is Go's poller's.
//
// It also raises the socket's SO_RCVLOWAT while data streams in, so the
// poller wakes the receiver once per millisecond of data (lowat.lag)
// instead of once per segment or two: on loopback the wake-ups, not the
// reads, were most of what a receiver cost. What sits below the mark is
// counted late by at most that much data at the rate measured, and never
// by more than 5 ms (lowat.tick): a wait that long ends, the mark drops to one byte, and the
// next read takes what is there. The end of the stream (FIN) always wakes
// the receiver, so the total is exact.
type discardReader struct {
	rc  syscall.RawConn
	buf []byte // discardSink: its length bounds one read; the kernel never writes it
	n   int
	err error
	fn  func(fd uintptr) bool

	// stamping: the next read takes one byte, with the kernel's stamp of
	// its arrival (arrived, a wall-clock time; zero when the kernel gave
	// none). Only the first read does.
	stamping bool
	arrived  time.Time
	oob      [64]byte

	lowat, want int       // SO_RCVLOWAT set, and to set at the next read
	since       time.Time // start of the rate measurement
	got         int       // bytes read since then
	tickArmed   bool      // the read deadline set is a lowat tick
	adapt       bool      // the mark may rise
}

// lowatTuning says how the receive low-water mark follows the rate: lag
// is how much data, in time at the measured rate, the mark may hold back;
// max caps it in bytes, min is the least worth setting (below it the mark
// stays at one byte); tick bounds the wait for it in time; every is how
// often the rate is measured. onSet, when not nil, hears each mark set
// (tests).
type lowatTuning struct {
	lag, tick, every time.Duration
	max, min         int
	onSet            func(int)
}

// lowat is the tuning receivers use.
var lowat = lowatTuning{lag: time.Millisecond, tick: 5 * time.Millisecond, every: 10 * time.Millisecond, max: 1 << 20, min: 16 << 10}

// discardRead bounds one recv(MSG_TRUNC). A read copies nothing, so its
// length costs nothing, and reads of up to 1 MiB rather than 128 KiB take
// what a wake-up found in fewer system calls (each of which may also send
// a window update): 1.08×, 1.21×, 1.19× and 1.10× the throughput with 1,
// 2, 4 and 8 streams on loopback, at less CPU per GB (bench/README.md).
const discardRead = 1 << 20

// discardSink is the buffer every discardReader passes to recv: the kernel
// never writes it (MSG_TRUNC on TCP), and nothing reads it, so one serves
// all receivers and a thousand of them cost no memory for it.
var discardSink = make([]byte, discardRead)

// newDiscardReader returns a discardReader for a plain TCP connection, or
// nil for anything else (a TLS or test wrapper), which is read as before.
// adapt lets it raise the receive low-water mark (not for a receiver that
// a Hold pauses through the read deadline).
func newDiscardReader(conn net.Conn, adapt bool) *discardReader {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	d := &discardReader{rc: rc, buf: discardSink, lowat: 1, want: 1, adapt: adapt}
	d.fn = d.recv
	// Only a socket that asks for stamps already (its listener's, from
	// StampArrivals) is stamped: asking now would come too late for
	// what is queued, and would switch the kernel's stamping on and off
	// for every receive.
	_ = rc.Control(func(fd uintptr) {
		v, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS)
		d.stamping = err == nil && v != 0
	})
	return d
}

// stampOn asks the kernel to stamp the arrival of what socket c receives
// (SO_TIMESTAMPNS).
func stampOn(c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) }); cerr != nil {
		return cerr
	}
	return err
}

// arrival is when the first byte read arrived, per the kernel, placed on
// the monotonic clock by now (read when that read returned); false when
// the kernel gave no stamp (or d is nil: no discarding reader).
func (d *discardReader) arrival(now time.Time) (time.Time, bool) {
	if d == nil || d.arrived.IsZero() {
		return time.Time{}, false
	}
	return now.Add(-max(now.Round(0).Sub(d.arrived), 0)), true
}

// recvFirst is the first read: one byte, with the kernel's stamp of its
// arrival (a TCP read reports its last segment's; one byte lies in the
// first), after which the socket stops asking for stamps.
func (d *discardReader) recvFirst(fd uintptr) (n int, errno error) {
	n, oobn, _, _, err := unix.Recvmsg(int(fd), d.buf[:1], d.oob[:], unix.MSG_TRUNC)
	if err != nil {
		return 0, err
	}
	if t, ok := udpio.KernelRxTime(d.oob[:oobn]); ok && n > 0 {
		d.arrived = t
	}
	d.stamping = false
	_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 0)
	return n, nil
}

// recv is the RawConn.Read callback: one non-blocking recv; false asks the
// poller to wait for the socket to become readable.
func (d *discardReader) recv(fd uintptr) bool {
	if d.want != d.lowat {
		d.setMark(int(fd))
	}
	for {
		if d.stamping {
			n, err := d.recvFirst(fd)
			switch {
			case err == nil:
				d.n, d.err = n, nil
				return true
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return false
			}
			d.n, d.err = 0, err
			return true
		}
		n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&d.buf[0])), uintptr(len(d.buf)), unix.MSG_TRUNC, 0, 0)
		switch errno {
		case 0:
			d.n, d.err = int(n), nil
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		default:
			d.n, d.err = 0, errno
			return true
		}
	}
}

// setMark sets SO_RCVLOWAT to d.want, but to no more than a quarter of the
// receive buffer: a mark near the buffer's size (a small -w) would let the
// advertised window close before the receiver woke, and slow the sender.
// The kernel grows a buffer it tunes itself to fit the mark.
func (d *discardReader) setMark(fd int) {
	w := d.want
	if w > 1 {
		if rb, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF); err == nil && w > rb/4 {
			w = rb / 4
		}
		if w < lowat.min {
			w = 1
		}
	}
	d.want = w
	if w == d.lowat || unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT, w) != nil {
		return
	}
	d.lowat = w
	if lowat.onSet != nil {
		lowat.onSet(w)
	}
}

// Read takes up to len(buf) bytes off the socket and returns how many, or
// io.EOF once the peer closed and everything was read.
func (d *discardReader) Read() (int, error) {
	d.n, d.err = 0, nil
	if err := d.rc.Read(d.fn); err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: err}
	}
	if d.err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("recvfrom", d.err)}
	}
	if d.n == 0 {
		return 0, io.EOF
	}
	return d.n, nil
}

// observe counts n bytes read at now and, every lowat.every, sets the
// low-water mark to lowat.lag of data at the rate measured.
func (d *discardReader) observe(n int, now time.Time) {
	if !d.adapt {
		return
	}
	if d.since.IsZero() {
		d.since = now
		return
	}
	d.got += n
	el := now.Sub(d.since)
	if el < lowat.every {
		return
	}
	w := int(float64(d.got) / el.Seconds() * lowat.lag.Seconds())
	switch {
	case w < lowat.min:
		w = 1
	case w > lowat.max:
		w = lowat.max
	}
	d.want, d.since, d.got = w, now, 0
}

// deadline is the read deadline for the next read: idle (zero: none), or
// sooner, a lowat tick while the mark holds data back. set says whether
// it must be set (a tick armed before must be cleared).
func (d *discardReader) deadline(now, idle time.Time) (at time.Time, set bool) {
	wasArmed := d.tickArmed
	d.tickArmed = false
	if d.want > 1 {
		if t := now.Add(lowat.tick); idle.IsZero() || t.Before(idle) {
			d.tickArmed = true
			return t, true
		}
	}
	return idle, !idle.IsZero() || wasArmed
}

// wantsDeadline says whether the next read needs a deadline set or
// cleared for the mark (false for a nil reader).
func (d *discardReader) wantsDeadline() bool { return d != nil && (d.want > 1 || d.tickArmed) }

// ticked reports whether a read that ran into its deadline met a lowat
// tick (not the idle timeout); the mark then drops to one byte, so the
// next read takes whatever waits below it.
func (d *discardReader) ticked() bool {
	if !d.tickArmed {
		return false
	}
	// tickArmed stays set: the next deadline must replace the one passed.
	d.want, d.since, d.got = 1, time.Time{}, 0
	return true
}

// close sets the mark back to one byte for whoever reads the socket next.
func (d *discardReader) close() {
	if d.lowat != 1 {
		_ = d.rc.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVLOWAT, 1) })
	}
}
