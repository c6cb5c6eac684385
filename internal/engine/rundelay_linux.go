package engine

import (
	"time"

	"golang.org/x/sys/unix"
)

// runDelayClock reads the run delay of the thread that opened it: the time
// it was ready to run but waited for a CPU (the second field of
// /proc/thread-self/schedstat, in nanoseconds). It keeps the file open, so
// a reading is one pread and allocates nothing.
type runDelayClock struct {
	fd  int
	buf [96]byte
}

// openRunDelay opens the calling thread's run delay; ok is false where the
// kernel does not keep it (no schedstat).
func openRunDelay() (*runDelayClock, bool) {
	fd, err := unix.Open("/proc/thread-self/schedstat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	r := &runDelayClock{fd: fd}
	if _, ok := r.read(); !ok {
		r.close()
		return nil, false
	}
	return r, true
}

// read returns the thread's run delay so far.
func (r *runDelayClock) read() (time.Duration, bool) {
	n, err := unix.Pread(r.fd, r.buf[:], 0)
	if err != nil || n <= 0 {
		return 0, false
	}
	return parseRunDelay(r.buf[:n])
}

func (r *runDelayClock) close() { _ = unix.Close(r.fd) }
