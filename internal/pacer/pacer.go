// Package pacer schedules sends at a precise average rate. Send times are
// fixed on an absolute timeline from the start (packet k is due at
// start + k/rate), so sleep overshoot never accumulates into a lower rate:
// whatever is due is sent at once, and the pacer reports how far behind its
// schedule the sender fell, so results can say when the offered rate was
// not what was asked.
//
// This kernel has no fq qdisc, so UDP pacing is done here, in user space.
package pacer

import (
	"context"
	"math"
	"time"
)

// Clock is the time source; tests inject a fake one.
type Clock interface {
	Now() time.Time
	// Sleep blocks for d or until ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock.
type SystemClock struct {
	// HoldP makes short sleeps keep the calling goroutine's processor
	// (the Go scheduler's P; see sleep_linux.go): after the sleep the
	// goroutine runs on at once, where otherwise it waits for another
	// thread of the process to hand it one, which on a busy host takes
	// milliseconds whatever the thread's own priority. It takes one of
	// GOMAXPROCS processors from the process's other goroutines for as
	// long as the sender runs: for a real-time sender's locked thread,
	// with GOMAXPROCS of 2 or more.
	HoldP bool
}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep sleeps for d, returning early with ctx.Err() when ctx is done.
// Waits shorter than a few milliseconds block the calling thread for
// precision (see sleep_linux.go) and are not interrupted by ctx.
func (c SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	if d < preciseLimit {
		if c.HoldP {
			heldSleep(d)
		} else {
			preciseSleep(d)
		}
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Pacer releases packets at a fixed rate. The zero rate means unpaced:
// every call to Due says a full batch is due. A Pacer is used by one
// goroutine.
type Pacer struct {
	clock    Clock
	interval float64 // nanoseconds between packets; 0 = unpaced
	start    time.Time
	released int64
	maxLag   time.Duration
	// stalls are the deepest lags of the episodes in which the sender was
	// more than StallFloor behind; inStall says one is going on.
	stalls       []time.Duration
	inStall      bool
	stallsBeyond int
}

// StallFloor is the lag from which the pacer records a stall: an episode
// in which the sender fell behind its schedule and then caught up in a
// burst. Below it a burst is a few datagrams, which no queue notices.
const StallFloor = time.Millisecond

// maxStalls bounds the stalls one schedule keeps (Stalls).
const maxStalls = 4096

// New returns a pacer sending pps packets per second (0 = unpaced),
// starting now.
func New(clock Clock, pps float64) *Pacer {
	p := &Pacer{clock: clock}
	p.SetRate(pps)
	return p
}

// SetRate changes the rate from now on (for sweeps that change rate
// between trials). The schedule restarts at the current time.
func (p *Pacer) SetRate(pps float64) {
	p.interval = 0
	if pps > 0 {
		p.interval = 1e9 / pps
	}
	p.start = p.clock.Now()
	p.released = 0
	p.maxLag = 0
	p.stalls, p.inStall, p.stallsBeyond = p.stalls[:0], false, 0
}

// Start returns the start of the current schedule.
func (p *Pacer) Start() time.Time { return p.start }

// at returns when packet k is due, in nanoseconds after the start. Due and
// Next both use it, so a packet is due exactly at the time Next names.
func (p *Pacer) at(k int64) int64 { return int64(math.Ceil(float64(k) * p.interval)) }

// Due returns how many packets (at most max) are due at time now and
// marks them released. It also records how late the oldest of them is.
func (p *Pacer) Due(now time.Time, max int) int {
	if p.interval == 0 {
		p.released += int64(max)
		return max
	}
	elapsed := int64(now.Sub(p.start))
	// k is the last packet due: at(k) <= elapsed < at(k+1).
	k := int64(float64(elapsed) / p.interval)
	for k >= 0 && p.at(k) > elapsed {
		k--
	}
	for p.at(k+1) <= elapsed {
		k++
	}
	due := k + 1 - p.released
	if due <= 0 {
		return 0
	}
	lag := time.Duration(elapsed - p.at(p.released))
	if due <= 1 {
		lag = 0 // one packet due: on time, however late the wake
	}
	if lag > p.maxLag {
		p.maxLag = lag
	}
	p.noteStall(lag)
	if due > int64(max) {
		due = int64(max)
	}
	p.released += due
	return int(due)
}

// Next returns the time the next packet is due.
func (p *Pacer) Next() time.Time {
	if p.interval == 0 {
		return p.start
	}
	return p.start.Add(time.Duration(p.at(p.released)))
}

// Gather returns when to wake to release the next batch: when the next
// packet is due, or later, when up to max packets are due, as long as the
// first of them waits no longer than window. At rates below one packet per
// window it is Next: each packet leaves on its own time. At higher rates,
// where a thread cannot wake once per packet anyway, it gathers packets
// into batches (one system call, one GSO packet) instead of waking for
// each; the average rate is unchanged, as the schedule is absolute.
func (p *Pacer) Gather(max int, window time.Duration) time.Time {
	if p.interval == 0 || max <= 1 || window <= 0 {
		return p.Next()
	}
	extra := int64(float64(window) / p.interval)
	extra = min(extra, int64(max-1))
	return p.start.Add(time.Duration(p.at(p.released + extra)))
}

// Wait sleeps until the next packet is due.
func (p *Pacer) Wait(ctx context.Context) error {
	return p.clock.Sleep(ctx, p.Next().Sub(p.clock.Now()))
}

// noteStall follows the stall episodes: one starts when a release is more
// than StallFloor late and ends at the first that is not.
func (p *Pacer) noteStall(lag time.Duration) {
	switch {
	case lag <= StallFloor:
		p.inStall = false
	case !p.inStall:
		p.inStall = true
		if len(p.stalls) == maxStalls {
			p.stallsBeyond++
			return
		}
		p.stalls = append(p.stalls, lag)
	case p.stallsBeyond == 0 && lag > p.stalls[len(p.stalls)-1]:
		p.stalls[len(p.stalls)-1] = lag
	}
}

// Stalls returns the deepest lag of each episode in which the sender fell
// more than StallFloor behind its schedule and caught up in a burst, in
// order; complete is false when there were more than it keeps (4,096).
// Each burst held about its lag times the rate in packets.
func (p *Pacer) Stalls() (lags []time.Duration, complete bool) {
	return append([]time.Duration(nil), p.stalls...), p.stallsBeyond == 0
}

// MaxLag returns the furthest the sender fell behind its schedule: how late
// the oldest packet of a burst was when it was released. A large lag means
// the sender could not keep up and sent in catch-up bursts.
func (p *Pacer) MaxLag() time.Duration { return p.maxLag }
