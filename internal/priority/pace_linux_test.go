package priority

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// policy is the calling thread's scheduling class.
func policy(t *testing.T) uint32 {
	t.Helper()
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatalf("sched_getattr: %v", err)
	}
	return a.Policy
}

// onLockedThread runs f on a goroutine locked to its own thread, which
// ends with it (so no class it set outlives the test).
func onLockedThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		f()
	}()
	<-done
}

// TestPaceThreadRealTime: as root, a paced sender's thread runs in
// SCHED_FIFO until Release puts it back in the normal class, and the
// summary says so.
func TestPaceThreadRealTime(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("real-time scheduling needs root (or CAP_SYS_NICE); scripts/test runs as root in CI")
	}
	restore(t) // PaceThread raised the process's nice too
	before := Summary()
	onLockedThread(func() {
		p := PaceThread(nil)
		if !p.RealTime || p.Err != nil {
			if errors.Is(p.Err, ErrNoWatchdog) {
				t.Skip(p.Err)
			}
			t.Errorf("PaceThread = %+v, want real time", p.Pacing)
			return
		}
		if got := policy(t); got != unix.SCHED_FIFO {
			t.Errorf("policy while pacing %d, want SCHED_FIFO", got)
		}
		p.Release()
		if got := policy(t); got != unix.SCHED_NORMAL {
			t.Errorf("policy after Release %d, want SCHED_NORMAL", got)
		}
	})
	if s := Summary(); s.RealTime != before.RealTime+1 {
		t.Errorf("summary %+v after %+v: want one more real-time send", s, before)
	}
}

// TestPaceThreadDutyCap: a real-time sender that keeps its core busy goes
// back to the normal class after a DutyWindow or two, and the summary
// counts it.
func TestPaceThreadDutyCap(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("real-time scheduling needs root (or CAP_SYS_NICE); scripts/test runs as root in CI")
	}
	restore(t)
	before := Summary()
	onLockedThread(func() {
		p := PaceThread(nil)
		if !p.RealTime {
			t.Skipf("not real-time: %v", p.Err)
		}
		defer p.Release()
		// Spin on this thread's own CPU clock for up to 2 s of its
		// CPU time, checking as a sender does.
		for p.sys.threadCPU() < 2*time.Second && !p.Demoted {
			p.Check(time.Now())
		}
		if !p.Demoted {
			t.Errorf("a thread that used 2 s of CPU on end was not demoted")
		}
		if got := policy(t); got != unix.SCHED_NORMAL {
			t.Errorf("policy after the cap %d, want SCHED_NORMAL", got)
		}
	})
	if s := Summary(); s.Demoted != before.Demoted+1 {
		t.Errorf("summary %+v after %+v: want one more demoted send", s, before)
	}
}

// TestPaceThreadKeptNormal: a process that keeps its senders normal (a
// server) gets no real time, and says why.
func TestPaceThreadKeptNormal(t *testing.T) {
	KeepSendersNormal("a server")
	defer keepNormal.Store("")
	onLockedThread(func() {
		p := PaceThread(nil)
		defer p.Release()
		if p.RealTime || p.Err == nil || p.Err.Error() != "a server" {
			t.Errorf("PaceThread = %+v, want normal, for the server", p.Pacing)
		}
		if got := policy(t); got != unix.SCHED_NORMAL {
			t.Errorf("policy %d, want SCHED_NORMAL", got)
		}
	})
}
