package priority

import (
	"errors"
	"os"
	"runtime"
	"strings"
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

// TestMain keeps this test binary's real-time slots in a directory of its
// own, so that a wirebench running beside the tests takes none of them.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wirebench-slots-test")
	if err == nil {
		slotDirs = []string{dir}
	}
	code := m.Run()
	if err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// TestRealTimeSlotsShared: with every slot of the host held (as by other
// wirebench clients), a paced sender stays in the normal class and says
// why; once one is given back it runs real-time, and its Release gives
// the slot back again.
func TestRealTimeSlotsShared(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("real-time scheduling needs root (or CAP_SYS_NICE); scripts/test runs as root in CI")
	}
	restore(t)
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	for range RealTimeSlots() {
		f, err := takeSlot()
		if err != nil {
			t.Fatalf("taking the %d slots: %v", RealTimeSlots(), err)
		}
		held = append(held, f)
	}
	if _, err := takeSlot(); !errors.Is(err, ErrSlotsTaken) {
		t.Fatalf("a slot beyond the %d: %v, want ErrSlotsTaken", RealTimeSlots(), err)
	}
	onLockedThread(func() {
		p := PaceThread(nil)
		defer p.Release()
		if p.RealTime || !errors.Is(p.Err, ErrSlotsTaken) || policy(t) != unix.SCHED_NORMAL {
			t.Errorf("every slot held: PaceThread = %+v, policy %d; want the normal class and ErrSlotsTaken", p.Pacing, policy(t))
		}
		if !strings.Contains(p.String(), "normal priority: other wirebench senders on this host hold every real-time slot") {
			t.Errorf("it says %q", p.String())
		}
	})
	held[len(held)-1].Close()
	held = held[:len(held)-1]
	onLockedThread(func() {
		p := PaceThread(nil)
		if !p.RealTime {
			if errors.Is(p.Err, ErrNoWatchdog) {
				t.Skip(p.Err)
			}
			t.Errorf("a slot free: PaceThread = %+v, want real time", p.Pacing)
			return
		}
		if _, err := takeSlot(); !errors.Is(err, ErrSlotsTaken) {
			t.Errorf("the sender's slot was not held while it ran: %v", err)
		}
		p.Release()
	})
	f, err := takeSlot()
	if err != nil {
		t.Fatalf("Release did not give the slot back: %v", err)
	}
	held = append(held, f)
}
