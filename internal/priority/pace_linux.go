package priority

import (
	"errors"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// pacerSys is the calling thread's scheduling as it was before real time.
type pacerSys struct{ nice int }

// realTime puts the calling thread in SCHED_FIFO. The kernel resets the
// class of threads it makes (SCHED_RESET_ON_FORK): the Go runtime may
// start its threads from this one, and they must not inherit it.
func realTime() (pacerSys, error) {
	if b, err := os.ReadFile("/proc/sys/kernel/sched_rt_runtime_us"); err == nil && strings.TrimSpace(string(b)) == "-1" {
		return pacerSys{}, ErrNoWatchdog
	}
	nice, err := threadNice(unix.Gettid())
	if err != nil {
		return pacerSys{}, err
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Flags: unix.SCHED_FLAG_RESET_ON_FORK, Priority: rtPriority}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			err = ErrNotPermitted
		}
		return pacerSys{}, err
	}
	return pacerSys{nice: nice}, nil
}

// normal puts the calling thread back in the normal class at its nice.
func (s pacerSys) normal() {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL, Nice: int32(s.nice)}
	_ = unix.SchedSetAttr(0, &attr, 0)
}

// threadCPU is the CPU time the calling thread used so far.
func (pacerSys) threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// lockMemory locks mem in RAM; it says whether it could (an unprivileged
// process may lock only RLIMIT_MEMLOCK's few pages).
func lockMemory(mem []byte) bool { return unix.Mlock(mem) == nil }

// unlockMemory undoes lockMemory.
func unlockMemory(mem []byte) { _ = unix.Munlock(mem) }

// disabled says the user asked for senders at normal priority.
func disabled() bool { return os.Getenv("WIREBENCH_REALTIME") == "0" }
