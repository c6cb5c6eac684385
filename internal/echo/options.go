package echo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/units"
)

// Options are the latency command's flags as typed: Options.Config checks
// them and builds the test. Every error it returns is a mistake in them,
// naming the flag.
type Options struct {
	Port              int
	Proto             string  // --proto: ProtoUDP, ProtoTCP or ProtoConnect
	Count             int     // -c
	Seconds           float64 // -t
	Interval, Timeout float64 // -i, --timeout: seconds
	Size              int     // -s
	// CountAndTime says both -c and -t were given.
	CountAndTime bool
}

// Config checks the options and turns them into the test of host.
func (o Options) Config(host string) (Config, error) {
	cfg := Config{Host: host, Port: o.Port, Proto: o.Proto, Count: o.Count, Size: o.Size}
	if err := oneOf("--proto", o.Proto, ProtoUDP, ProtoTCP, ProtoConnect); err != nil {
		return cfg, err
	}
	var err error
	if cfg.Duration, err = units.Seconds("--time", o.Seconds); err != nil {
		return cfg, err
	}
	if cfg.Interval, err = units.Seconds("--interval", o.Interval); err != nil {
		return cfg, err
	}
	if cfg.Timeout, err = units.Seconds("--timeout", o.Timeout); err != nil {
		return cfg, err
	}
	switch {
	case o.Timeout == 0:
		return cfg, errors.New("invalid --timeout 0: want seconds > 0")
	case o.Count < 0:
		return cfg, fmt.Errorf("invalid --count %d", o.Count)
	case o.CountAndTime:
		return cfg, errors.New("choose one of -c and -t")
	}
	return cfg, nil
}

// LoadProbeOptions are the --latency flags of a throughput test as typed:
// the probe's protocol ("" for none), the seconds between probes and the
// seconds of idle probing before the test.
type LoadProbeOptions struct {
	Proto          string
	Interval, Idle float64
}

// Config checks the options and turns them into the probe of a server's
// port: nil without --latency. Every error is a mistake in the options.
func (o LoadProbeOptions) Config(port int) (*LoadProbeConfig, error) {
	if o.Proto == "" {
		return nil, nil
	}
	if err := oneOf("--latency", o.Proto, ProtoUDP, ProtoICMP); err != nil {
		return nil, err
	}
	iv, err := units.Seconds("--latency-interval", o.Interval)
	if err != nil || iv < time.Millisecond {
		return nil, fmt.Errorf("invalid --latency-interval %v: want at least 0.001 seconds", o.Interval)
	}
	idle, err := units.Seconds("--latency-idle", o.Idle)
	if err != nil || idle < iv {
		return nil, fmt.Errorf("invalid --latency-idle %v: want at least one probe interval", o.Idle)
	}
	return &LoadProbeConfig{Proto: o.Proto, Port: port, Interval: iv, Idle: idle}, nil
}

// oneOf checks a flag whose value comes from a fixed set.
func oneOf(flag, value string, valid ...string) error {
	if slices.Contains(valid, value) {
		return nil
	}
	return fmt.Errorf("invalid %s %q: want one of %s", flag, value, strings.Join(valid, ", "))
}
