package rfc2544

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// Options are what the rfc2544 command is asked, as typed: Options.Setup
// checks them and builds the run. Every error Setup returns is a mistake in
// them.
type Options struct {
	Port               int
	Mode, Sizes, Tests string
	Medium             string
	PDR, Loads         string
	Strict             bool   // RFC 2544's trial lengths and repetitions
	Trial, Confirm     string // "": the schedule's
	MaxBurst           int64
	Gap                string // "": sweep.DefaultGap
	// SameClock says the far end reads our clock (--same-clock: a lab on
	// this host).
	SameClock bool
}

// Setup is a run built from Options: its configuration, the test as its
// document records it, and the runner of its trials.
type Setup struct {
	Config Config
	Test   result.RFC2544Test
	Runner sweep.Runner
}

// ClockCheck says whether a far end at host reads this machine's clock,
// and why; told is --same-clock.
type ClockCheck func(host string, told bool) (shared bool, why string)

// Setup checks the options and builds the run against host; clock is
// asked, for a wirebench server, whether the latency test gives one-way
// latency. The configuration's Validate is left to the caller.
func (o Options) Setup(host string, clock ClockCheck) (*Setup, error) {
	s := &Setup{Test: result.RFC2544Test{Mode: o.Mode, Host: host, Port: o.Port, Strict: o.Strict}}
	cfg := &s.Config
	m, err := linerate.LookupMedium(o.Medium)
	if err != nil {
		return nil, fmt.Errorf("invalid --medium %q: %v", o.Medium, err)
	}
	s.Test.Medium = m.Name
	if cfg.Sizes, err = sweep.ParseSizes(o.Sizes, m); err != nil {
		return nil, err
	}
	if err := o.tests(cfg); err != nil {
		return nil, err
	}
	if err := o.schedule(cfg); err != nil {
		return nil, err
	}
	if o.Port < 1 || o.Port > 65535 {
		return nil, fmt.Errorf("invalid --port %d", o.Port)
	}
	cfg.LinePPS = sweep.UDPLinePPS(m)
	if o.SameClock && o.Mode != sweep.ModeWirebench {
		return nil, fmt.Errorf("--same-clock is for --mode wirebench, where the server times what arrives")
	}
	server := sweep.SessionRunner{Base: session.ClientConfig{Host: host, Port: o.Port, Dialect: session.DialectIperf2}}
	switch o.Mode {
	case sweep.ModeReflect:
		s.Runner, cfg.Latency = sweep.ReflectRunner{Host: host, Port: o.Port}, result.RFC2544RoundTrip
	case sweep.ModeWirebench:
		// The server's reply is no longer than our FIN: a FIN with room
		// for the transit summary brings it back at every size, RFC
		// 2544's 18 and 82 B of UDP payload (64 and 128 B frames) too.
		server.Base.FinLen = iperf2.MinDatagramForLatency
		s.Runner, cfg.BacklogFloor = server, sweep.ServerBacklogFloor
		shared, why := clock(host, o.SameClock)
		cfg.Latency, s.Test.Clock = result.RFC2544DelayVariation, result.RFC2544ClockSeparate
		if shared {
			cfg.Latency, s.Test.Clock = result.RFC2544OneWay, result.RFC2544ClockShared
		}
		s.Test.ClockWhy = why
	case sweep.ModeIperf2:
		s.Runner, cfg.BacklogFloor = server, sweep.ServerBacklogFloor
		cfg.NoLatency = "cannot run against an iperf 2 server: its report carries no per-datagram times; run it against a reflector (--mode reflect) for round-trip times"
	default:
		return nil, fmt.Errorf("invalid --mode %q: want one of %s", o.Mode, strings.Join(sweep.Modes, ", "))
	}
	return s, nil
}

// tests sets the tests, the PDR's loss and the latency test's loads.
func (o Options) tests(cfg *Config) error {
	for _, t := range strings.Split(o.Tests, ",") {
		if t = strings.TrimSpace(t); !slices.Contains(Tests, t) {
			return fmt.Errorf("invalid --tests %q: want some of %s", o.Tests, strings.Join(Tests, ","))
		}
		cfg.Tests = append(cfg.Tests, t)
	}
	var err error
	if cfg.PDRPercent, err = sweep.ParseLossPercent(o.PDR); err != nil || cfg.PDRPercent == 0 {
		return fmt.Errorf("invalid --pdr %q: want a share above 0 like 0.5%%", o.PDR)
	}
	for _, l := range strings.Split(o.Loads, ",") {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(l), "%"), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return fmt.Errorf("invalid --loads %q: want percentages of the NDR above 0 up to 100, like 10,50,90,100", o.Loads)
		}
		cfg.Loads = append(cfg.Loads, v)
	}
	return nil
}

// schedule sets the trial lengths: the default or --strict schedule, with
// --trial, --confirm, --max-burst and --gap.
func (o Options) schedule(cfg *Config) error {
	cfg.Schedule = DefaultSchedule()
	if o.Strict {
		cfg.Schedule = StrictSchedule()
	}
	for _, d := range []struct {
		flag, val string
		to        *time.Duration
	}{{"--trial", o.Trial, &cfg.Schedule.Search}, {"--confirm", o.Confirm, &cfg.Schedule.Confirm}} {
		if d.val == "" {
			continue
		}
		v, err := units.ParseDuration(d.val)
		if err != nil || v <= 0 {
			return fmt.Errorf("invalid %s %q: want a duration like 1s or 500ms", d.flag, d.val)
		}
		*d.to = v
	}
	if o.MaxBurst < 2 || o.MaxBurst > 10_000_000 {
		return fmt.Errorf("invalid --max-burst %d: want 2 to 10000000 frames", o.MaxBurst)
	}
	cfg.Schedule.MaxBurst = o.MaxBurst
	var err error
	cfg.Gap, err = sweep.ParseGap(o.Gap, o.Mode)
	return err
}
