package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/reflectrun"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/units"
)

// Modes: what the far end of a sweep is.
const (
	ModeReflect   = "reflect"   // a UDP reflector: what comes back is counted
	ModeWirebench = "wirebench" // a wirebench server: its report gives the counts
	ModeIperf2    = "iperf2"    // an iperf 2 server (a device's): its server report gives the counts
)

// Modes lists the modes in the order help shows them.
var Modes = []string{ModeReflect, ModeWirebench, ModeIperf2}

// ReflectRunner runs trials against a UDP reflector (`wirebench reflect`,
// a device in loopback) through reflectrun.Run.
type ReflectRunner struct {
	Host string
	Port int
	// Drain is how long each trial listens for late reflections after its
	// last send (0: the session's default).
	Drain time.Duration
}

// Trial sends one trial's datagrams and counts what came back.
func (r ReflectRunner) Trial(ctx context.Context, s Spec) (result.SweepOutcome, error) {
	res, err := reflectrun.Run(ctx, reflectrun.Config{Host: r.Host, Port: r.Port, Length: s.Size,
		PPS: s.RatePPS, Duration: s.Duration, Packets: s.Packets, Drain: r.Drain})
	o := result.SweepOutcome{Sent: res.Sent, SendErrors: res.SendErrors, OfferedPPS: res.OfferedPPS,
		Received: res.Received, Lost: res.Lost(), Total: res.Sent,
		SendSeconds: res.SendSeconds, ReceiveSeconds: res.ReceiveSeconds, RTT: summariseRTT(res.RTT), RTTs: res.RTTs,
		RTTStep: res.SampleStep, Arrivals: res.TickArrivals, HostDrops: max(res.HostDrops, 0)}
	if res.RTT.Count > 0 {
		o.RTTDist = &res.RTT
	}
	// The backlog is the queue a far end delivering at the rate it
	// showed while it held one builds at the rate we offered.
	o.ServicePPS = servicePPS(res.RTTs, res.Arrivals, res.SampleStep)
	o.BacklogKnown = len(res.RTTs) >= 20
	if o.ServicePPS > 0 && res.OfferedPPS > o.ServicePPS {
		o.BacklogS = res.SendSeconds * (res.OfferedPPS/o.ServicePPS - 1)
	}
	o.MaxLagS = res.MaxLag.Seconds()
	o.StallsCut = res.StallsCut
	o.StallLagsS = make([]float64, len(res.Stalls))
	for i, l := range res.Stalls {
		o.StallLagsS[i] = l.Seconds()
	}
	if res.Duplicates > 0 {
		o.Warnings = append(o.Warnings, "the far end sent some datagrams back twice; each was counted once")
	}
	if res.TooOld > 0 {
		o.Warnings = append(o.Warnings, fmt.Sprintf("%d datagrams came back more than %d behind the latest: each was counted as received without checking whether it came back twice", res.TooOld, stats.Window))
	}
	if res.Sent > 0 && res.Received == 0 {
		// Not NoReport: nothing back is what a device that drops every
		// datagram of this size shows (a closed port ends the run with
		// an error instead).
		o.Warnings = append(o.Warnings, "nothing came back: is a reflector listening on that port?")
	}
	return o, err
}

// Queueing seen in a reflect run: a datagram waited when its round-trip
// time was more than queuedRTT above the run's lowest (its 1st
// percentile); a stretch of such datagrams lasting at least queuedSpan is
// a stretch where the far end held a queue, and what it delivered in it
// left at its own pace.
const (
	queuedRTT  = 2 * time.Millisecond
	queuedSpan = 10 * time.Millisecond
)

// servicePPS is, from a sample of every step-th datagram back, the rate a far end delivered at while it held a queue: the
// spacing of its deliveries over the stretches where what came back had
// waited, pooled. Within a stretch the spacing is fitted through the
// earliest delivery of each of about 20 chunks (the lower envelope): a
// reflector that sends late, then catches up, only ever delays a delivery,
// so the envelope keeps its pace while a plain fit would bend with it. It
// is 0 when the far end held no queue long enough to time: it then kept
// our pace. Our sender's stalls do not bias it: the burst that follows a
// stall builds a queue the far end drains at its own rate, which is what
// is measured; a far end that cannot keep our rate holds a queue for most
// of the trial.
func servicePPS(rtts, arrivals []time.Duration, step int64) float64 {
	n := min(len(rtts), len(arrivals))
	if n < 20 {
		return 0
	}
	sorted := slices.Clone(rtts[:n])
	slices.Sort(sorted)
	floor := sorted[n/100] + queuedRTT
	var sxy, sxx float64
	for a := 0; a < n; {
		if rtts[a] <= floor {
			a++
			continue
		}
		b := a
		for b < n && rtts[b] > floor {
			b++
		}
		if b-a >= 40 && arrivals[b-1]-arrivals[a] >= queuedSpan {
			xy, xx := envelopeFit(arrivals[a:b])
			sxy, sxx = sxy+xy, sxx+xx
		}
		a = b
	}
	if sxx == 0 || sxy <= 0 {
		return 0
	}
	return sxx / sxy * float64(max(step, 1))
}

// envelopeFit fits arrival time over arrival order through the lower
// envelope of a stretch: the earliest delivery (against the stretch's
// average spacing) of each of about 100 chunks, then twice the half of
// those lying lowest against the fit so far. A reflector that stalls,
// even for several chunks, only ever delays deliveries, so its stalls
// fall out. It returns the centred sums Σxy and Σxx of the final fit, so
// that stretches can be pooled.
func envelopeFit(arr []time.Duration) (sxy, sxx float64) {
	k := len(arr)
	y := func(i int) float64 { return arr[i].Seconds() }
	step := (y(k-1) - y(0)) / float64(k-1)
	chunk := max(2, k/100)
	var pts []int
	for c := 0; c+chunk <= k; c += chunk {
		best := c
		for i := c; i < c+chunk; i++ {
			if y(i)-float64(i)*step < y(best)-float64(best)*step {
				best = i
			}
		}
		pts = append(pts, best)
	}
	fit := func(pts []int) (sxy, sxx, mx, my float64) {
		for _, i := range pts {
			mx, my = mx+float64(i), my+y(i)
		}
		mx, my = mx/float64(len(pts)), my/float64(len(pts))
		for _, i := range pts {
			sxy += (float64(i) - mx) * (y(i) - my)
			sxx += (float64(i) - mx) * (float64(i) - mx)
		}
		return sxy, sxx, mx, my
	}
	for pass := 0; pass < 2 && len(pts) >= 12; pass++ {
		xy, xx, mx, my := fit(pts)
		if xx == 0 {
			return 0, 0
		}
		slope := xy / xx
		res := func(i int) float64 { return y(i) - my - slope*(float64(i)-mx) }
		r := make([]float64, len(pts))
		for n, i := range pts {
			r[n] = res(i)
		}
		slices.Sort(r)
		cut := r[len(r)/2]
		kept := pts[:0:0]
		for _, i := range pts {
			if res(i) <= cut {
				kept = append(kept, i)
			}
		}
		pts = kept
	}
	if len(pts) < 3 {
		return 0, 0
	}
	sxy, sxx, _, _ = fit(pts)
	return sxy, sxx
}

// summariseRTT is the result.SweepRTT summary of a run's round trips
// (nil for none): min, mean and max exact, percentiles within 0.1 %.
func summariseRTT(s result.RTTSummary) *result.SweepRTT {
	if s.Count == 0 {
		return nil
	}
	return &result.SweepRTT{Min: s.Min, Mean: s.Mean, P50: s.P50, P99: s.P99, Max: s.Max}
}

// SessionRunner runs trials as iperf2-dialect UDP tests against a server
// (a wirebench server, an iperf 2 server, or a device's server started
// through its shell): our sender's counts and the receive counts of the
// server's report or, when the dialect brings none back, of the device's
// own report. Base carries the host, port, dialect and socket options;
// each trial sets the rate, length and length of the test.
type SessionRunner struct {
	Base session.ClientConfig
	// Run runs one trial's test (nil: dialect.RunClient). The --dut runner
	// wraps the client in the device's server; a result it returns with
	// an error is the trial's figures, the error ends the sweep.
	Run func(ctx context.Context, s Spec, cfg session.ClientConfig) (*result.Result, error)
	// DeviceCounts reads the data datagrams received and lost from the
	// device's own figures (result.Device); ok is false when the device
	// did not print them. Used only when the far end's report is missing.
	DeviceCounts func(d result.Device) (received, lost int64, ok bool)
}

// Config is the client configuration of one trial.
func (r SessionRunner) Config(s Spec) session.ClientConfig {
	cfg := r.Base
	cfg.UDP = true
	cfg.Length = s.Size
	cfg.Rate = units.Rate{Value: s.RatePPS, PPS: true}
	cfg.Duration, cfg.Bytes = s.Duration, 0
	if s.Packets > 0 {
		cfg.Duration, cfg.Bytes = 0, s.Packets*int64(s.Size)
	}
	return cfg
}

// Trial runs one UDP test.
func (r SessionRunner) Trial(ctx context.Context, s Spec) (result.SweepOutcome, error) {
	run := r.Run
	if run == nil {
		run = func(ctx context.Context, _ Spec, cfg session.ClientConfig) (*result.Result, error) {
			return dialect.RunClient(ctx, cfg)
		}
	}
	res, err := run(ctx, s, r.Config(s))
	if res == nil {
		if err == nil {
			err = errors.New("the test gave no result")
		}
		return result.SweepOutcome{}, err
	}
	o := r.outcome(res)
	if err != nil {
		return o, err
	}
	if res.Error != "" && ctx.Err() == nil {
		return o, errors.New(res.Error)
	}
	return o, nil
}

// outcome reads a trial's figures from its result.
func (r SessionRunner) outcome(res *result.Result) result.SweepOutcome {
	var o result.SweepOutcome
	if res.Sender != nil {
		o.Sent, o.SendErrors, o.OfferedPPS = res.Sender.Packets, res.Sender.SendErrors, res.Sender.PacketsPerSecond
		o.SendSeconds = res.Sender.Seconds
	}
	if d := res.Device; d != nil {
		dev := *d
		dev.Transcript = nil
		o.Device = &dev
	}
	o.Warnings = append(o.Warnings, res.Warnings...)
	if rc := res.Receiver; rc != nil {
		o.Received, o.Lost, o.Total, o.ReceiveSeconds = rc.Packets, rc.Lost, rc.Total, rc.Seconds
		o.Transit = rc.Transit
		if rc.Seconds > 0 && o.SendSeconds > 0 {
			o.BacklogS, o.BacklogKnown = rc.Seconds-o.SendSeconds, true
		}
		if o.Total == 0 {
			o.Total = rc.Packets + rc.Lost
		}
		o.Unreported = max(o.Sent-o.Total, 0)
		o.CountedBy = result.CountedByPeer
		return o
	}
	if o.Device != nil && r.DeviceCounts != nil {
		if got, lost, ok := r.DeviceCounts(*o.Device); ok {
			// The device's report carries no receive window we can
			// trust to 20 ms (zperf prints 10 ms steps, Harmony 100 ms),
			// so the backlog stays unknown.
			// A device counts data datagrams; our sender counts its FIN
			// too, as iperf does (one, whatever it re-sent).
			o.Received, o.Lost, o.Total = got, lost, got+lost
			o.Unreported = max(o.Sent-1-o.Total, 0)
			o.CountedBy = result.CountedByDevice
			o.Warnings = append(o.Warnings, "no server report came back: the receive counts are the device's own, from its shell, and its report gives no receive window fine enough to check for a backlog (queueing), so only the loss judged this trial")
			return o
		}
	}
	o.NoReport = true
	o.Warnings = append(o.Warnings, "no server report came back: the receive counts are unknown and the trial counts as all lost")
	return o
}
