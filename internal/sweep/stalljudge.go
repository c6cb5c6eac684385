package sweep

import (
	"fmt"

	"github.com/wirebench/wirebench/internal/result"
)

// overloadShare is how far our rate must exceed the rate a reflector was
// timed delivering at (ServicePPS, which a loaded host blurs by some per
// cent) for a trial to be the far end's overload whatever our sender did.
const overloadShare = 1.1

// StallJudge tells which failing trials of one size's searches this host
// spoiled (its Spoiled method is a Config.Spoiled), from a reflector's
// round trips: a sweep whose caller sets no Spoiled of its own judges each
// size with one (sizeJudges), RFC 2544 each size's throughput search. It
// keeps room, the far end's queue room as seen so far: the smallest deep
// wait of any trial that lost (see queueRoom; a queue that overflowed
// held datagrams for its whole depth, and this host's stalls, which hold
// up its reflector and receiver too, only make waits look longer, so the
// smallest is the closest).
//
// It also keeps the far end's own rate and queue depth as its losing
// trials timed them (service, depth): a trial offered above that rate for
// long enough to fill that queue lost by the far end's rate alone.
type StallJudge struct {
	room    float64 // seconds; 0: none seen yet
	service float64 // the highest rate the far end was timed delivering at while it held a queue (0: none)
	depth   float64 // the deepest queue wait above the lowest round trip, seconds
}

// Spoiled says why a failing trial was this host's doing rather than the
// far end's, or "" when nothing shows it was:
//
//   - our own socket dropped datagrams that came back (they count as lost);
//   - our sender fell further behind its schedule than the far end's queue
//     has room for (from a reflector's round trips), so the burst it
//     caught up in overflowed a queue a steady sender would not have, and
//     either the far end's queue stood empty for most of the trial (the
//     median wait within a quarter of a deep one: it kept up with the
//     rate, so the loss came from our bursts, however many) or that one
//     burst holds all that was lost;
//
// and never when the far end was timed delivering well below our rate
// while it held a queue (overload), nor when our rate exceeded the rate it
// was timed at by enough, over the trial's length, to fill the deepest
// queue seen (overflows): that loss is the far end's.
//
// Without round trips (a server's report) the queue is unknown and only
// the stall rule of Verdict applies.
func (j *StallJudge) Spoiled(s Spec, o result.SweepOutcome) string {
	lost := o.Lost + o.Unreported
	if o.HostDrops > 0 && lost > 0 {
		return fmt.Sprintf("our own socket dropped %d of the datagrams that came back (host-side)", o.HostDrops)
	}
	room, empty, ok := queueRoom(o)
	if !ok || lost == 0 {
		return "" // a backlog alone is sweep's stall rule's to judge
	}
	if o.ServicePPS > 0 && o.OfferedPPS > overloadShare*o.ServicePPS {
		// The far end was timed delivering well below our rate while
		// it held a queue: it could not carry the rate, stalls or not.
		return ""
	}
	if j.room == 0 || room < j.room {
		j.room = room
	}
	j.service = max(j.service, o.ServicePPS)
	j.depth = max(j.depth, (o.RTT.P99-o.RTT.Min)/1e3)
	if j.overflows(o) {
		return ""
	}
	if !(o.MaxLagS > j.room) {
		return ""
	}
	burst := o.MaxLagS * o.OfferedPPS
	// The threshold, for what it is: the least a losing trial of the
	// size had free above its median wait, not the queue's size.
	beyond := fmt.Sprintf("more than the far end's queue had free in any trial of this size that lost (%.1f ms)", j.room*1e3)
	switch {
	case empty:
		return fmt.Sprintf("our sender fell %.1f ms behind its schedule, %s, and its queue stood empty for most of the trial: the loss came from our catch-up bursts", o.MaxLagS*1e3, beyond)
	case float64(lost) <= burst:
		return fmt.Sprintf("our sender fell %.1f ms behind its schedule, %s, and its catch-up burst (%.0f datagrams) holds all %d lost", o.MaxLagS*1e3, beyond, burst, lost)
	}
	// Several stalls, each judged alone: together their bursts beyond the
	// queue's room may hold what one does not.
	// A cut list makes both figures lower bounds: the verdict stands (more
	// bursts only hold more), and the text says "at least".
	if n, bursts := StallBursts(o, j.room); n > 1 && float64(lost) <= bursts {
		atLeast := ""
		if o.StallsCut {
			atLeast = "at least "
		}
		return fmt.Sprintf("our sender fell behind its schedule by %s %s%d times (the deepest %.1f ms), and their catch-up bursts (%s%.0f datagrams) hold all %d lost", beyond, atLeast, n, o.MaxLagS*1e3, atLeast, bursts, lost)
	}
	return ""
}

// overflows says whether a steady sender at o's rate would have
// overflowed the far end's queue by itself: what it sends beyond the
// highest rate the far end was timed delivering at, over the trial's send
// window, is more than the deepest queue seen holds at that rate. Such a
// trial loses whatever our sender did, as one just above the far end's
// rate does once its queue has filled (against a 10 Mbit/s model with a
// 5 ms queue, 14918/s of 18 B for 2.24 s builds 83 datagrams of backlog
// where the queue holds 74). Both figures err towards a stall: the
// highest rate timed, the deepest wait seen (a stalled reflector only
// makes waits longer).
func (j *StallJudge) overflows(o result.SweepOutcome) bool {
	if j.service <= 0 || j.depth <= 0 || o.SendSeconds <= 0 {
		return false
	}
	return (o.OfferedPPS-j.service)*o.SendSeconds > j.depth*j.service
}

// queueRoom is the far end's queue room seen in one reflector trial, in
// seconds: its deep wait (the 99th percentile round trip) over its median
// one; empty says the median wait was within a quarter of that deep one
// above the lowest round trip (the queue stood empty most of the time). ok
// is false without round trips. The 99th percentile, not the highest:
// when this host stalls, so do its reflector and its receiver, and the
// few round trips they hold up would pass for a deep queue.
func queueRoom(o result.SweepOutcome) (room float64, empty, ok bool) {
	r := o.RTT
	if r == nil || !(r.P99 > r.Min) {
		return 0, false, false
	}
	return (r.P99 - r.P50) / 1e3, r.P50-r.Min <= (r.P99-r.Min)/4, true
}

// Room is the far end's queue room seen so far, in seconds (0: none yet).
func (j *StallJudge) Room() float64 { return j.room }

// sizeJudges is a Config.Spoiled that judges each size's trials with a
// StallJudge of that size's own: a queue's room in datagrams is the far
// end's, its room in time depends on the size.
func sizeJudges() func(Spec, result.SweepOutcome) string {
	judges := map[int]*StallJudge{}
	return func(s Spec, o result.SweepOutcome) string {
		j := judges[s.Size]
		if j == nil {
			j = &StallJudge{}
			judges[s.Size] = j
		}
		return j.Spoiled(s, o)
	}
}
