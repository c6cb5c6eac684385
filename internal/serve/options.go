package serve

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/web"
)

// Options are the server command's own flags, as typed: durations in
// seconds, the rate as text, the reverse-test sources as CIDR prefixes
// or addresses.
type Options struct {
	Port, Iperf3Port int
	Bind             string
	OneShot          bool
	// Interval, IdleTimeout and MaxDuration are in seconds.
	Interval, IdleTimeout, MaxDuration float64
	MaxTests                           int
	MaxRate                            string // bit/s with k/M/G; "": the default, "0": no limit
	AllowReverse, DenyReverse          []string
	// MaxPerSource and MaxNewPerSecond are the per-source limits; 0 is no
	// limit.
	MaxPerSource    int
	MaxNewPerSecond float64
	// KeepRaw saves every header-less test (--keep-raw; Config.KeepRaw).
	KeepRaw bool
	// Nice is the scheduling priority the server asks for where allowed
	// (--nice; priority.DefaultNice), 0 to leave it as started.
	Nice int
}

// ServerConfig validates the options and builds the session server's
// configuration from them (its socket options and hooks left to the
// caller); its MaxSendRate is --max-rate's: 0 (not given) for the
// default, session.DefaultMaxSendRate, negative for none ("0"). Every error is a
// mistake in the options.
func (o Options) ServerConfig() (session.ServerConfig, error) {
	cfg := session.ServerConfig{Bind: o.Bind, Port: o.Port, OneShot: o.OneShot, MaxTests: o.MaxTests,
		MaxTestsPerSource: noLimit(o.MaxPerSource), NewTestsPerSecondPerSource: noLimit(o.MaxNewPerSecond)}
	var err error
	durations := []struct {
		name string
		v    float64
		d    *time.Duration
	}{{"--interval", o.Interval, &cfg.Interval}, {"--idle-timeout", o.IdleTimeout, &cfg.IdleTimeout}, {"--max-duration", o.MaxDuration, &cfg.MaxDuration}}
	for _, d := range durations {
		if *d.d, err = units.Seconds(d.name, d.v); err != nil {
			return cfg, err
		}
	}
	if cfg.AllowReverse, err = admit.ParseAllow(o.AllowReverse); err != nil {
		return cfg, fmt.Errorf("invalid --allow-reverse: %v", err)
	}
	if cfg.DenyReverse, err = admit.ParseAllow(o.DenyReverse); err != nil {
		return cfg, fmt.Errorf("invalid --deny-reverse: %v", err)
	}
	if o.MaxPerSource < 0 {
		return cfg, fmt.Errorf("invalid --max-tests-per-source %d: want a count ≥ 0 (0 = no limit)", o.MaxPerSource)
	}
	if v := o.MaxNewPerSecond; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return cfg, fmt.Errorf("invalid --max-new-tests-per-second-per-source %v: want tests per second ≥ 0 (0 = no limit)", v)
	}
	if o.Port < 0 || o.Port > 65535 {
		return cfg, fmt.Errorf("invalid port %d", o.Port)
	}
	if o.Port == 0 {
		cfg.Port = -1
	}
	if o.Nice < -20 || o.Nice > 19 {
		return cfg, fmt.Errorf("invalid --nice %d: want -20 (the largest share of the CPU) to 19, or 0 to leave the priority as it is", o.Nice)
	}
	cfg.Nice = o.Nice
	if o.Iperf3Port < 0 || o.Iperf3Port > 65535 {
		return cfg, fmt.Errorf("invalid --iperf3-port %d", o.Iperf3Port)
	}
	if o.MaxRate == "0" {
		cfg.MaxSendRate = -1
	} else if o.MaxRate != "" {
		r, err := units.ParseRate(o.MaxRate)
		if err != nil || r.PPS {
			return cfg, fmt.Errorf("invalid --max-rate %q: want a rate in bit/s like 100M, or 0 for no limit", o.MaxRate)
		}
		cfg.MaxSendRate = r.Value
	}
	return cfg, nil
}

// noLimit turns an option's "0 = no limit" into the session's negative
// "no limit" (its 0 means the default).
func noLimit[T int | float64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// WebOptions are the server's dashboard flags (--web, --probe-allow), as
// typed.
type WebOptions struct {
	Addr       string
	ProbeAllow []string
}

// Web validates the options and returns the dashboard they ask for: nil
// without an address. Every error is a mistake in them.
func (o WebOptions) Web() (*Web, error) {
	if o.Addr == "" {
		if len(o.ProbeAllow) > 0 {
			return nil, errors.New("--probe-allow needs --web ADDR:PORT (probes are asked for over HTTP)")
		}
		return nil, nil
	}
	addr, err := web.ListenAddr(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("invalid --web %q: %v", o.Addr, err)
	}
	allow, err := admit.ParseAllow(o.ProbeAllow)
	if err != nil {
		return nil, fmt.Errorf("invalid --probe-allow: %v", err)
	}
	return &Web{Addr: addr, ProbeAllow: allow, ProbeWords: web.ProbeWords(o.ProbeAllow)}, nil
}
