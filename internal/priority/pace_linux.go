package priority

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// pacerSys is the calling thread's scheduling as it was before real time,
// and the host's real-time slot it holds meanwhile.
type pacerSys struct {
	nice int
	slot *os.File
}

// realTime puts the calling thread in SCHED_FIFO while it holds one of
// the host's real-time slots (takeSlot; taken once the class is allowed,
// so that a process without the right makes no lock file). The kernel
// resets the class of threads it makes (SCHED_RESET_ON_FORK): the Go
// runtime may start its threads from this one, and they must not inherit
// it.
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
	slot, err := takeSlot()
	if err != nil {
		pacerSys{nice: nice}.normal()
		return pacerSys{}, err
	}
	return pacerSys{nice: nice, slot: slot}, nil
}

// normal puts the calling thread back in the normal class at its nice,
// and gives its real-time slot back.
func (s pacerSys) normal() {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL, Nice: int32(s.nice)}
	_ = unix.SchedSetAttr(0, &attr, 0)
	if s.slot != nil {
		s.slot.Close() // drops its lock
	}
}

// RealTimeSlots is how many paced senders of this host, in every
// wirebench process, may be in the real-time class at once: one per two
// CPUs (at least one). Each uses at most DutyCapPercent of a core, so
// together they take at most a quarter of the CPUs, however many clients
// run on the host.
func RealTimeSlots() int { return max(1, runtime.NumCPU()/2) }

// slotDirs are where the slots' lock files go: the first that can be
// made (tests point it elsewhere).
var slotDirs = []string{"/run/wirebench", filepath.Join(os.TempDir(), "wirebench")}

// takeSlot takes one of the host's RealTimeSlots: an exclusive lock
// (flock) on one of as many files, which the kernel drops when the file
// is closed or the process ends, however it ends.
func takeSlot() (*os.File, error) {
	n := RealTimeSlots()
	var lastErr error
	for _, dir := range slotDirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			lastErr = err
			continue
		}
		opened := 0
		for i := range n {
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("realtime-slot-%d", i)), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				lastErr = err
				continue
			}
			opened++
			if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
				return f, nil
			}
			f.Close()
		}
		if opened > 0 {
			return nil, fmt.Errorf("%w (%d at once on this host, each at most %d %% of a core)", ErrSlotsTaken, n, DutyCapPercent)
		}
	}
	return nil, fmt.Errorf("making the real-time slots' lock files: %w", lastErr)
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
