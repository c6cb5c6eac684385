package diagnose

import (
	"math"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/tickdiag"
)

// queuedBacklog is the least growth of a server's receive window over our
// send window that shows a queue (sweep.ServerBacklogFloor).
const queuedBacklog = sweep.ServerBacklogFloor

// observe turns a trial's outcome into a diagnosis run: what the far end
// delivered, its loss, its round trips and the tick its arrivals followed.
// linePPS is the medium's packet rate for the size (tickdiag's "well
// under the medium").
func observe(id int, purpose string, s sweep.Spec, o result.SweepOutcome, linePPS float64) result.DiagnosisRun {
	run := result.DiagnosisRun{ID: id, Purpose: purpose, Size: s.Size, AskedPPS: s.RatePPS, SentPPS: o.OfferedPPS,
		Sent: o.Sent, Received: o.Received, HostDrops: o.HostDrops, Warnings: o.Warnings}
	if o.Sent > 0 {
		run.LossPercent = 100 * float64(max(o.Sent-o.Received, 0)) / float64(o.Sent)
	}
	// What the far end delivered is its count over its own receive window:
	// a far end pushed past its limit never idles from its first delivery
	// to its last (its queue holds the excess), so that is its own pace;
	// one that kept up delivered at ours. A reflector's pace timed from
	// the spacing of what had waited in its queue (sweep's lower-envelope
	// fit, which a late reflector does not bend) is finer, and is taken
	// where the two agree within 10 %: on a loaded host a stretch that
	// only our sender's burst queued can time something else.
	if o.ReceiveSeconds > 0 && o.Received > 1 {
		run.DeliveredPPS = float64(o.Received-1) / o.ReceiveSeconds
	}
	if d := run.DeliveredPPS; o.ServicePPS > 0 && d > 0 && o.ServicePPS > 0.9*d && o.ServicePPS < 1.1*d {
		run.DeliveredPPS = o.ServicePPS
	}
	// Never more than we offered (as sweep reports it): a far end whose
	// window our stalled sender shortened drained a burst faster, which
	// says nothing of its limit.
	if run.SentPPS > 0 {
		run.DeliveredPPS = min(run.DeliveredPPS, run.SentPPS)
	}
	run.Queued = o.ServicePPS > 0 || (o.BacklogKnown && o.RTTs == nil && o.BacklogS > queuedBacklog.Seconds())
	if o.RTT != nil {
		run.RTTMinMs = o.RTT.Min
		run.RTTLateMs, run.RTTSettled = lateRTT(o.RTTs)
	}
	if len(o.Arrivals) >= tickdiag.MinFrames {
		arr := slices.Clone(o.Arrivals)
		slices.Sort(arr)
		if t := tickdiag.Diagnose(arr, linePPS); t != nil {
			run.TickHz, run.FramesPerTick = t.TickHz, t.FramesPerTick
			run.ArrivalsMs = excerpt(arr, time.Duration(excerptTicks*float64(time.Second)/t.TickHz))
		}
	}
	return run
}

// excerptTicks and excerptMax bound the arrivals a run keeps for the
// report's chart of a tick.
const (
	excerptTicks = 20
	excerptMax   = 400
)

// excerpt is the arrivals (sorted) from the middle of a run for span (at
// most excerptMax), in ms since the first of them.
func excerpt(arr []time.Duration, span time.Duration) []float64 {
	from := arr[len(arr)/2:]
	var out []float64
	for _, a := range from {
		if d := a - from[0]; d <= span && len(out) < excerptMax {
			out = append(out, float64(d)/1e6)
		}
	}
	return out
}

// lateRTT is the median round trip of the last third of a run, in ms:
// where a far end pushed past its limit holds its full queue; and whether
// the round trip had settled there (the medians of the last third's two
// halves within 5 % or 1 ms). A queue still filling when the run ended
// rises through the last third, and its median is no queue's length.
func lateRTT(rtts []time.Duration) (ms float64, settled bool) {
	if len(rtts) < 3 {
		return 0, false
	}
	late := rtts[len(rtts)*2/3:]
	h := len(late) / 2
	m := median(late)
	if h < 3 {
		return m, false
	}
	m1, m2 := median(late[:h]), median(late[h:])
	return m, math.Abs(m2-m1) <= max(1, 0.05*max(m1, m2))
}

// median is the median of d, in ms.
func median(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2]) / 1e6
}
