package pacer

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Go's runtime rounds sleeps shorter than a millisecond up to about 1.1 ms
// on Linux (its netpoller waits in whole milliseconds), which would turn a
// 100 Mbit/s stream into bursts every 1.1 ms. Short waits therefore use
// nanosleep on the calling thread, which wakes within tens of microseconds
// (a few with TuneThread).

// preciseLimit is the longest wait slept with nanosleep; longer waits use a
// Go timer and stay cancellable.
const preciseLimit = 4 * time.Millisecond

// preciseSleep blocks the calling OS thread for d.
func preciseSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// heldSleep blocks the calling OS thread for d without telling the Go
// scheduler (a raw system call): the goroutine keeps its P, so no other
// thread has to hand it one when the sleep ends. The runtime's monitor
// may still preempt a goroutine that held its P for 10 ms; the sleep then
// ends early (EINTR) and goes on.
func heldSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for {
		_, _, e := unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), uintptr(unsafe.Pointer(&ts)), 0)
		if e != unix.EINTR {
			return
		}
	}
}

// TuneThread asks the kernel to wake the calling thread's sleeps without
// the default 50 µs timer slack. Call it from a goroutine locked to its
// thread (runtime.LockOSThread), such as a paced sender's.
func TuneThread() {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
}
