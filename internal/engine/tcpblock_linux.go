package engine

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/stats"
)

// blockingStep bounds each blocking write (SO_SNDTIMEO), and so how late
// the loop sees a cancelled ctx; reads on the socket get the same bound
// while it is blocking, so a reader in another goroutine falls back to
// Go's poller (and its deadlines) within this time after the phase ends.
const blockingStep = 50 * time.Millisecond

// blockingMargin: the blocking phase ends when less than a step and this
// margin remain, so no blocking write (its timeout rounded up to the
// kernel's tick) can run past the test's end; the last writes go through
// Go's poller with the exact deadline.
const blockingMargin = 20 * time.Millisecond

// sendBlocking writes cfg.Buffer as SendTCP does, but from one locked OS
// thread with the socket in blocking mode, so the kernel puts the thread
// to sleep in write(2) and wakes it itself (as iperf 2's sender threads),
// instead of Go's poller parking and handing the goroutine between
// threads. It returns done=false, with what it wrote in res, when it did
// not finish the send: conn is not a plain TCP connection, or the test's
// end is near; SendTCP's own loop does the rest.
func sendBlocking(ctx context.Context, conn net.Conn, cfg TCPSendConfig, c *stats.Counters, res *TCPResult, end time.Time) (done bool, err error) {
	tc, ok := conn.(*net.TCPConn) // not a wrapper: -Z's sendfile writes through its own Write
	if !ok {
		return false, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false, nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cerr := rc.Control(func(fd uintptr) { err = setBlocking(int(fd), true) }); cerr != nil || err != nil {
		_ = rc.Control(func(fd uintptr) { _ = setBlocking(int(fd), false) })
		return false, nil
	}
	defer rc.Control(func(fd uintptr) { _ = setBlocking(int(fd), false) })
	for ctx.Err() == nil {
		if !end.IsZero() && time.Until(end) < blockingStep+blockingMargin {
			return false, nil
		}
		b := cfg.Buffer
		if cfg.Bytes > 0 {
			left := cfg.Bytes - res.Bytes
			if left <= 0 {
				return true, nil
			}
			b = b[:min(int64(len(b)), left)]
		}
		var n int
		var werr error
		if cerr := rc.Write(func(fd uintptr) bool {
			n, werr = unix.SendmsgN(int(fd), b, nil, nil, unix.MSG_NOSIGNAL)
			return true
		}); cerr != nil {
			werr = cerr
		}
		res.Bytes += int64(max(n, 0))
		res.Writes++
		c.Bytes.Store(cfg.Counted + res.Bytes)
		switch {
		case werr == nil, errors.Is(werr, unix.EAGAIN), errors.Is(werr, unix.EINTR):
			// EAGAIN: the step's timeout; EINTR: a signal (Go's
			// preemption); what was written before either is counted.
		default:
			return true, &net.OpError{Op: "write", Net: "tcp", Source: conn.LocalAddr(), Addr: conn.RemoteAddr(),
				Err: os.NewSyscallError("sendmsg", werr)}
		}
	}
	return true, nil
}

// setBlocking puts fd in blocking mode with every send and receive bounded
// by blockingStep (on), or back in non-blocking mode with no bound (off).
func setBlocking(fd int, on bool) error {
	tv := unix.NsecToTimeval(blockingStep.Nanoseconds())
	if !on {
		tv = unix.Timeval{}
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return err
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	return syscall.SetNonblock(fd, !on)
}
