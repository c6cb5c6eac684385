package sweep

import (
	"fmt"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// Options are what the sweep command is asked, as typed: Options.Setup
// checks them and builds the sweep. Every error Setup returns is a mistake
// in them.
type Options struct {
	Port                         int
	Sizes, Mode, Loss            string
	Trial, Confirm, Gap, MaxRate string
	Medium                       string
	Packets                      int64 // datagrams per trial instead of Trial
	Repeat                       int
	NoBisect                     bool
	// Verbose asks the text for each warning's detail: the sizes' and
	// trials' own words (report.WriteSweepText).
	Verbose bool
}

// Setup is a sweep built from Options: its configuration, the test as its
// document records it, and the runner of its trials.
type Setup struct {
	Config Config
	Test   result.SweepTest
	Runner Runner
}

// ServerBacklogFloor is the least backlog that fails a trial against a
// server (its receive window's timing resolution); see
// Config.BacklogFloor. The server's report times its receive window from
// its first and last datagram: a few ms of scheduling at either end are
// not a queue.
const ServerBacklogFloor = 20 * time.Millisecond

// DefaultGap is the pause between trials against mode: 200 ms; 1 s against
// an iperf 2 server, whose 2.1.8 server misses a test that starts within
// about 0.3 s of the last one's end; 50 ms against a reflector, where a
// trial listens until its answers stop (reflectrun.Quiet), so the far
// end's queues have emptied before the gap begins.
func DefaultGap(mode string) time.Duration {
	switch mode {
	case ModeIperf2:
		return time.Second
	case ModeReflect:
		return 50 * time.Millisecond
	}
	return 200 * time.Millisecond
}

// ParseGap is the --gap given as text ("": DefaultGap(mode)).
func ParseGap(s, mode string) (time.Duration, error) {
	if s == "" {
		return DefaultGap(mode), nil
	}
	gap, err := units.ParseDuration(s)
	if err != nil || gap < 0 {
		return 0, fmt.Errorf("invalid --gap %q: want a duration like 200ms", s)
	}
	return gap, nil
}

// Setup checks the options and builds the sweep of host. The
// configuration's Validate is left to the caller.
func (o Options) Setup(host string) (*Setup, error) {
	m, err := linerate.LookupMedium(o.Medium)
	if err != nil {
		return nil, fmt.Errorf("invalid --medium %q: %v", o.Medium, err)
	}
	sizes, err := ParseSizes(o.Sizes, m)
	if err != nil {
		return nil, err
	}
	loss, err := ParseLossPercent(o.Loss)
	if err != nil {
		return nil, fmt.Errorf("invalid --loss %q: want a share like 0, 0.1%% or 1%%", o.Loss)
	}
	s := &Setup{Config: Config{Sizes: sizes, LinePPS: UDPLinePPS(m), LossPercent: loss,
		Packets: o.Packets, Repeat: o.Repeat, NoBisect: o.NoBisect}}
	if err := o.times(&s.Config); err != nil {
		return nil, err
	}
	if err := o.counts(); err != nil {
		return nil, err
	}
	if s.Config.MaxPPS, err = o.maxPPS(s.Config.LinePPS); err != nil {
		return nil, err
	}
	for _, size := range sizes {
		if s.Config.LinePPS(size) <= 0 {
			return nil, fmt.Errorf("size %d B: medium %s has no packet rate for it", size, m.Name)
		}
	}
	s.Test = result.SweepTest{Mode: o.Mode, Host: host, Port: o.Port, Medium: m.Name, LossPercent: loss,
		ConfirmS: s.Config.Confirm.Seconds(), Packets: o.Packets, MaxRate: o.MaxRate, Repeat: o.Repeat,
		Bisect: !o.NoBisect, Sizes: sizes}
	if o.Packets > 0 {
		s.Config.Trial = 0
	} else {
		s.Test.TrialS = s.Config.Trial.Seconds()
	}
	switch o.Mode {
	case ModeReflect:
		s.Runner = ReflectRunner{Host: host, Port: o.Port}
	case ModeWirebench, ModeIperf2:
		s.Runner = SessionRunner{Base: session.ClientConfig{Host: host, Port: o.Port, Dialect: session.DialectIperf2}}
		s.Config.BacklogFloor = ServerBacklogFloor
	default:
		return nil, fmt.Errorf("invalid --mode %q: want one of %s", o.Mode, strings.Join(Modes, ", "))
	}
	return s, nil
}

// times sets the trial, confirming trial and gap lengths of c.
func (o Options) times(c *Config) error {
	var err error
	if c.Trial, err = units.ParseDuration(o.Trial); err != nil || c.Trial <= 0 {
		return fmt.Errorf("invalid --trial %q: want a duration like 1s or 500ms", o.Trial)
	}
	if c.Confirm, err = units.ParseDuration(o.Confirm); err != nil || c.Confirm < 0 {
		return fmt.Errorf("invalid --confirm %q: want a duration like 10s or 60s, or 0 to confirm with a trial as long as the others", o.Confirm)
	}
	c.Gap, err = ParseGap(o.Gap, o.Mode)
	return err
}

// counts checks --packets, --repeat and --port.
func (o Options) counts() error {
	switch {
	case o.Packets < 0 || o.Packets == 1:
		return fmt.Errorf("invalid --packets %d: want at least 2", o.Packets)
	case o.Repeat < 1 || o.Repeat > 100:
		return fmt.Errorf("invalid --repeat %d: want 1 to 100", o.Repeat)
	case o.Port < 1 || o.Port > 65535:
		return fmt.Errorf("invalid --port %d", o.Port)
	}
	return nil
}

// maxPPS is the highest rate to try per size: --max-rate, else the
// medium's line rate.
func (o Options) maxPPS(line func(size int) float64) (func(size int) float64, error) {
	if o.MaxRate == "" {
		return line, nil
	}
	maxRate, err := units.ParseRate(o.MaxRate)
	if err != nil {
		return nil, fmt.Errorf("invalid --max-rate: %v", err)
	}
	// A rate asked for is tried as asked, also above the medium's maximum:
	// a point that passes there is judged suspect (the path is not the
	// medium named), where capping it at the medium would report a wrong
	// --medium's line rate as the device's.
	return func(size int) float64 {
		r := maxRate.Value
		if !maxRate.PPS {
			r /= float64(size * 8)
		}
		return r
	}, nil
}
