package priority

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// A paced sender (a UDP client, sweep's and RFC 2544's trials) sleeps
// until each batch is due. On a host whose cores are taken by other work,
// a thread at the default priority wakes milliseconds late, and a burst
// that catches up overflows a shallow queue at the far end at rates the
// link carries: the result then says "limited by this host". A thread in
// the real-time class (SCHED_FIFO) runs as soon as it wakes.
//
// Real time is bounded three times, so that senders can never starve the
// machine:
//   - a duty-cycle cap: the sender measures its own thread's CPU time and,
//     once it used more than DutyCapPercent of a core over a window of
//     DutyWindow, goes back to the normal class for the rest of the send
//     (a sender that needs that much is CPU-bound, which real time does
//     not cure);
//   - a watchdog: the kernel's real-time throttling (sched_rt_runtime_us)
//     leaves other threads a share of every second whatever a real-time
//     thread does; where it is switched off, no thread goes real-time;
//   - a host-wide count: at most RealTimeSlots senders, over every
//     wirebench process of the host, are real-time at once (a lock file
//     each); the others send at normal priority and say why.

// DutyCapPercent is the most of one core a real-time sender may use over
// a DutyWindow before it goes back to the normal class.
const DutyCapPercent = 50

// DutyWindow is the window over which the duty cycle is measured.
const DutyWindow = 100 * time.Millisecond

// rtPriority is the SCHED_FIFO priority a sender runs at: the lowest
// range, below the kernel's own threads (interrupt threads run at 50).
const rtPriority = 10

// ErrSlotsTaken says that as many senders as the host allows
// (RealTimeSlots), in this or other wirebench processes, run in real time
// already: several clients on one host, each under its own duty-cycle
// cap, would otherwise take every CPU.
var ErrSlotsTaken = errors.New("other wirebench senders on this host hold every real-time slot")

// ErrNoWatchdog says the kernel's real-time throttling is switched off
// (sched_rt_runtime_us is -1): a real-time thread could then take a core
// whole, so none is made.
var ErrNoWatchdog = errors.New("the kernel's real-time throttling is off (/proc/sys/kernel/sched_rt_runtime_us is -1)")

// Pacing is the scheduling one paced sender's thread got.
type Pacing struct {
	// RealTime says the thread ran in the real-time class (SCHED_FIFO)
	// from the start of the send.
	RealTime bool
	// Demoted says it went back to the normal class before the end: it
	// used more than DutyCapPercent of a core over a DutyWindow.
	Demoted bool
	// MemoryLocked says the sender's buffers were locked in RAM while it
	// sent (no page fault waits on the disk mid-burst).
	MemoryLocked bool
	// Err says why the thread was not made real-time.
	Err error
}

// Pacer is a paced sender's hold on real time: Check it each time the
// sender wakes, and Release it when the send ends, on the same locked
// thread that took it.
type Pacer struct {
	Pacing
	sys       pacerSys
	windowAt  time.Time
	windowCPU time.Duration
	released  bool
	locked    []byte
}

// Check enforces the duty-cycle cap; now is the sender's clock reading
// (monotonic). It costs one clock read per DutyWindow.
func (p *Pacer) Check(now time.Time) {
	if p == nil || !p.RealTime || p.Demoted {
		return
	}
	if p.windowAt.IsZero() {
		p.windowAt, p.windowCPU = now, p.sys.threadCPU()
		return
	}
	span := now.Sub(p.windowAt)
	if span < DutyWindow {
		return
	}
	cpu := p.sys.threadCPU()
	if used := cpu - p.windowCPU; used*100 > span*DutyCapPercent {
		p.sys.normal()
		p.Demoted = true
		note(func(s *PacingSummary) { s.Demoted++ })
		return
	}
	p.windowAt, p.windowCPU = now, cpu
}

// Release puts the thread back in the normal class and unlocks memory
// when this was the last sender holding it.
func (p *Pacer) Release() {
	if p == nil || p.released {
		return
	}
	p.released = true
	if p.RealTime && !p.Demoted {
		p.sys.normal()
	}
	if p.locked != nil {
		unlockMemory(p.locked)
	}
}

// PaceThread asks for real time for the calling goroutine's OS thread,
// which must be locked to it (runtime.LockOSThread) until Release, and
// locks mem (the sender's buffers) in RAM meanwhile. It never fails: a
// thread that cannot go real-time sends as before, and Pacing.Err says
// why.
func PaceThread(mem []byte) *Pacer {
	p := &Pacer{}
	if why, _ := keepNormal.Load().(string); why != "" {
		p.Err = errors.New(why)
	} else if disabled() {
		p.Err = errors.New("real-time pacing was switched off (" + disableEnv + ")")
	} else {
		p.sys, p.Err = realTime()
		p.RealTime = p.Err == nil
	}
	if p.RealTime {
		// The sender's thread is real-time, but the Go scheduler's
		// hand-offs go through the process's other threads (a
		// goroutine preempted after 10 ms on its processor waits for
		// one of them to give it back): they get a larger share of a
		// busy host too, as a server's do.
		raiseOnce.Do(func() { Raise(DefaultNice) })
	}
	if p.RealTime && len(mem) > 0 && lockMemory(mem) {
		p.locked, p.MemoryLocked = mem, true
	}
	note(func(s *PacingSummary) {
		if p.RealTime {
			s.RealTime++
			s.MemoryLocked = s.MemoryLocked || p.MemoryLocked
			return
		}
		s.Normal++
		s.Why = p.Err.Error()
	})
	return p
}

// keepNormal, when set, says why this process's senders stay in the
// normal class.
var keepNormal atomic.Value

// KeepSendersNormal keeps every later sender of this process in the
// normal class, for the reason why: a server's senders answer what peers
// ask, and many of them must not each hold a real-time thread.
func KeepSendersNormal(why string) { keepNormal.Store(why) }

// PacingSummary is what the paced senders of this process got, for a
// run's document: how many ran real-time, how many went back to the
// normal class, how many could not go real-time and why.
type PacingSummary struct {
	RealTime, Demoted, Normal int
	MemoryLocked              bool
	Why                       string
}

var (
	raiseOnce sync.Once
	summaryMu sync.Mutex
	summary   PacingSummary
)

func note(f func(*PacingSummary)) {
	summaryMu.Lock()
	f(&summary)
	summaryMu.Unlock()
}

// Summary returns what the paced senders of this process got so far.
func Summary() PacingSummary {
	summaryMu.Lock()
	defer summaryMu.Unlock()
	return summary
}

// String says the summary in a line, with what to do when real time was
// not had: "" when no paced sender ran.
func (s PacingSummary) String() string {
	switch {
	case s.RealTime+s.Normal == 0:
		return ""
	case s.Normal == 0 && s.Demoted == 0:
		return fmt.Sprintf("real-time (SCHED_FIFO, at most %d %% of a core)%s", DutyCapPercent, lockedWords(s.MemoryLocked))
	case s.Normal == 0:
		return fmt.Sprintf("real-time (SCHED_FIFO)%s; %d of %d sends used more than %d %% of a core and went back to normal priority", lockedWords(s.MemoryLocked), s.Demoted, s.RealTime, DutyCapPercent)
	case s.RealTime == 0:
		// Why says what to do where something can be done
		// (ErrNotPermitted names CAP_SYS_NICE).
		return "normal priority: " + s.Why
	}
	return fmt.Sprintf("real-time for %d of %d sends; the others at normal priority: %s", s.RealTime, s.RealTime+s.Normal, s.Why)
}

func lockedWords(locked bool) string {
	if locked {
		return ", its buffers locked in RAM"
	}
	return ""
}

// disableEnv names the environment variable that keeps senders at normal
// priority (set it to 0).
const disableEnv = "WIREBENCH_REALTIME=0"

// Since is what the paced senders got after before was taken: a run's own
// share of a process that runs several.
func (s PacingSummary) Since(before PacingSummary) PacingSummary {
	s.RealTime -= before.RealTime
	s.Demoted -= before.Demoted
	s.Normal -= before.Normal
	if s.Normal == 0 {
		s.Why = ""
	}
	return s
}

// StallAdvice is the warning for a run whose sender stalls spoiled
// figures while it ran at normal priority (the why and what to do), or ""
// when its senders were real-time or none ran.
func (s PacingSummary) StallAdvice() string {
	if s.Normal == 0 {
		return ""
	}
	return "our sender ran at normal priority, where a busy host delays it (" + s.Why + "): the stalls above are this host's"
}

// String says how one sender was scheduled, in the words of
// PacingSummary.String.
func (p Pacing) String() string {
	s := PacingSummary{MemoryLocked: p.MemoryLocked}
	switch {
	case p.RealTime:
		s.RealTime = 1
		if p.Demoted {
			s.Demoted = 1
		}
	case p.Err != nil:
		s.Normal, s.Why = 1, p.Err.Error()
	default:
		return ""
	}
	return s.String()
}

// RunReport is what a run (a sweep, an RFC 2544 run) says of its senders'
// scheduling since before was taken: the words for its document
// (PacingSummary.String) and, when this host spoiled its figures
// (spoiled) while they ran at normal priority, the warning (else "").
func RunReport(before PacingSummary, spoiled bool) (words, warning string) {
	s := Summary().Since(before)
	if spoiled {
		warning = s.StallAdvice()
	}
	return s.String(), warning
}
