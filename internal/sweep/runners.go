package sweep

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
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
// a device in loopback) through session.RunReflect.
type ReflectRunner struct {
	Host string
	Port int
	// Drain is how long each trial listens for late reflections after its
	// last send (0: the session's default).
	Drain time.Duration
}

// Trial sends one trial's datagrams and counts what came back.
func (r ReflectRunner) Trial(ctx context.Context, s Spec) (Outcome, error) {
	res, err := session.RunReflect(ctx, session.ReflectConfig{Host: r.Host, Port: r.Port, Length: s.Size,
		PPS: s.RatePPS, Duration: s.Duration, Packets: s.Packets, Drain: r.Drain})
	o := Outcome{Sent: res.Sent, SendErrors: res.SendErrors, OfferedPPS: res.OfferedPPS,
		Received: res.Received, Lost: res.Lost(), Total: res.Sent,
		SendSeconds: res.SendSeconds, ReceiveSeconds: res.ReceiveSeconds, RTT: summariseRTT(res.RTTs),
		HostDrops: max(res.HostDrops, 0)}
	o.BacklogS, o.BacklogKnown = rttRise(res.RTTs)
	o.MaxLagS = res.MaxLag.Seconds()
	if res.Duplicates > 0 {
		o.Warnings = append(o.Warnings, "the far end sent some datagrams back twice; each was counted once")
	}
	if res.Sent > 0 && res.Received == 0 {
		// Not NoReport: nothing back is what a device that drops every
		// datagram of this size shows (a closed port ends the run with
		// an error instead).
		o.Warnings = append(o.Warnings, "nothing came back: is a reflector listening on that port?")
	}
	return o, err
}

// rttRise is how much the round-trip time rose from the start of a run to
// its end: the median of the last tenth of the datagrams that came back
// minus the median of the first tenth (medians, so a scheduling stall of
// a few datagrams does not count, while a queue that fills all along
// does), scaled from the distance between the two medians (nine tenths of
// the run) to the whole run, so that it is the queue's growth over the
// send window. Unknown with fewer than 20 round trips.
func rttRise(rtts []time.Duration) (float64, bool) {
	n := len(rtts) / 10
	if n < 2 {
		return 0, false
	}
	med := func(d []time.Duration) time.Duration {
		c := slices.Clone(d)
		slices.Sort(c)
		return c[len(c)/2]
	}
	rise := (med(rtts[len(rtts)-n:]) - med(rtts[:n])).Seconds()
	return rise * float64(len(rtts)-1) / float64(len(rtts)-n), true
}

// summariseRTT is the RTT summary in milliseconds (nil for none).
func summariseRTT(rtts []time.Duration) *RTT {
	if len(rtts) == 0 {
		return nil
	}
	ms := make([]float64, len(rtts))
	for i, d := range rtts {
		ms[i] = float64(d) / 1e6
	}
	slices.Sort(ms)
	q := func(p float64) float64 { return ms[min(len(ms)-1, int(math.Ceil(p*float64(len(ms))))-1)] }
	return &RTT{Min: ms[0], Mean: mean(ms), P50: q(0.50), P99: q(0.99), Max: ms[len(ms)-1]}
}

// SessionRunner runs trials as iperf2-dialect UDP tests against a server
// (a wirebench server, an iperf 2 server, or a device's server started
// through its shell): our sender's counts and the receive counts of the
// server's report or, when the dialect brings none back, of the device's
// own report. Base carries the host, port, dialect and socket options;
// each trial sets the rate, length and length of the test.
type SessionRunner struct {
	Base session.ClientConfig
	// Run runs one trial's test (nil: session.RunClient). The --dut runner
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
func (r SessionRunner) Trial(ctx context.Context, s Spec) (Outcome, error) {
	run := r.Run
	if run == nil {
		run = func(ctx context.Context, _ Spec, cfg session.ClientConfig) (*result.Result, error) {
			return session.RunClient(ctx, cfg)
		}
	}
	res, err := run(ctx, s, r.Config(s))
	if res == nil {
		if err == nil {
			err = errors.New("the test gave no result")
		}
		return Outcome{}, err
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
func (r SessionRunner) outcome(res *result.Result) Outcome {
	var o Outcome
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
		if rc.Seconds > 0 && o.SendSeconds > 0 {
			o.BacklogS, o.BacklogKnown = rc.Seconds-o.SendSeconds, true
		}
		if o.Total == 0 {
			o.Total = rc.Packets + rc.Lost
		}
		o.Unreported = max(o.Sent-o.Total, 0)
		o.CountedBy = CountedByPeer
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
			o.CountedBy = CountedByDevice
			o.Warnings = append(o.Warnings, "no server report came back: the receive counts are the device's own, from its shell, and its report gives no receive window fine enough to check for a backlog (queueing), so only the loss judged this trial")
			return o
		}
	}
	o.NoReport = true
	o.Warnings = append(o.Warnings, "no server report came back: the receive counts are unknown and the trial counts as all lost")
	return o
}
