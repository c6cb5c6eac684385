package ping

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// Command is what the ping command is asked for, as typed: Command.Plan
// checks it and resolves the host.
type Command struct {
	Count             int    // -c: requests per size
	Interval, Timeout string // -i, --timeout: seconds or a duration
	Size, Sizes       string // -s, --sizes
	Ladder            bool   // --ladder
	MTU               int    // --mtu
	MTUSet            bool   // --mtu was given
	DF                bool   // --df
	Socket            string // --socket: auto, raw or unprivileged
	Source            string // -I: an address of this host or an interface name
	IPv4, IPv6        bool   // -4, -6
	Tries             int    // --tries (the reassembly probe)
	Medium            string // --medium
}

// Plan is a Command checked, its host resolved.
type Plan struct {
	Host              string
	Addr              net.IP
	Sizes             []int
	Count, Tries      int
	Interval, Timeout time.Duration
	DF                bool
	Socket            result.PingSocketKind
	Source            string
	MTU               int // from --mtu, or the route; 0 when unknown
	MTUSet            bool
	Medium            *linerate.Medium
}

// ConfigError is a mistake in a Command (Plan's other errors are the host's
// resolution).
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// configErrorf is a ConfigError saying format.
func configErrorf(format string, args ...any) error {
	return ConfigError{fmt.Errorf(format, args...)}
}

// Plan checks c and resolves host; the path MTU comes from the route when
// --mtu is not given.
func (c Command) Plan(ctx context.Context, host string) (Plan, error) {
	p := Plan{Host: host, Socket: result.PingSocketKind(c.Socket), Count: c.Count, Tries: c.Tries, DF: c.DF}
	if err := c.check(&p); err != nil {
		return p, err
	}
	var err error
	if p.Addr, err = resolve(ctx, host, c.IPv4, c.IPv6); err != nil {
		return p, err
	}
	if ip := net.ParseIP(c.Source); ip != nil && (ip.To4() == nil) != (p.Addr.To4() == nil) {
		return p, configErrorf("-I %s and %s (%s) are not the same IP version", c.Source, host, p.Addr)
	}
	p.Source = c.Source
	p.MTU, p.MTUSet = c.MTU, c.MTUSet
	if p.MTU == 0 {
		if mtu, err := RouteMTU(p.Addr); err == nil {
			p.MTU = mtu
		}
	}
	p.Sizes, err = c.sizes(p)
	return p, err
}

// check checks what needs no address, filling in p.
func (c Command) check(p *Plan) error {
	sockets := []string{"auto", string(result.PingSocketRaw), string(result.PingSocketUnprivileged)}
	if !slices.Contains(sockets, c.Socket) {
		return configErrorf("invalid --socket %q: want one of %s", c.Socket, strings.Join(sockets, ", "))
	}
	if c.Socket == "auto" {
		p.Socket = result.PingSocketAuto
	}
	var err error
	if p.Interval, err = units.ParseDuration(c.Interval); err != nil {
		return configErrorf("invalid --interval: %v", err)
	}
	if p.Timeout, err = units.ParseDuration(c.Timeout); err != nil || p.Timeout == 0 {
		return configErrorf("invalid --timeout %q: want a positive time", c.Timeout)
	}
	if c.Count < 1 || c.Tries < 1 {
		return configErrorf("--count and --tries must be at least 1")
	}
	if c.IPv4 && c.IPv6 {
		return configErrorf("-4 and -6 exclude each other")
	}
	if c.MTUSet && (c.MTU < 68 || c.MTU > 65535) {
		return configErrorf("invalid --mtu %d: want 68 to 65535", c.MTU)
	}
	if c.Medium != "" {
		m, err := linerate.LookupMedium(c.Medium)
		if err != nil {
			return configErrorf("invalid --medium: %v (known: %s)", err, strings.Join(linerate.MediumNames(), ", "))
		}
		p.Medium = &m
	}
	return nil
}

// sizes is the list of payload sizes: --ladder, --sizes or -s.
func (c Command) sizes(p Plan) ([]int, error) {
	v6 := p.Addr.To4() == nil
	maxp := MaxPayload(v6)
	if c.Ladder {
		mtu := p.MTU
		if mtu <= 0 || mtu > 65535 {
			mtu = 1500
		}
		return Ladder(mtu, v6), nil
	}
	list := c.Size
	if c.Sizes != "" {
		list = c.Sizes
	}
	var out []int
	for _, s := range strings.Split(list, ",") {
		n, err := units.ParseSize(s)
		if err != nil {
			return nil, ConfigError{err}
		}
		if n > int64(maxp) {
			return nil, configErrorf("size %d is over the largest echo payload, %d bytes", n, maxp)
		}
		out = append(out, int(n))
	}
	return out, nil
}

// resolve looks host up: its IPv4 address first unless only6.
func resolve(ctx context.Context, host string, only4, only6 bool) (net.IP, error) {
	network := "ip"
	switch {
	case only4:
		network = "ip4"
	case only6:
		network = "ip6"
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, network, host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	for _, ip := range ips {
		if ip.To4() != nil {
			return ip.To4(), nil
		}
	}
	return ips[0], nil
}

// Config is the pinger's configuration for the plan.
func (p Plan) Config() Config { return Config{Target: p.Addr, Socket: p.Socket, Source: p.Source} }

// Options are what to send for the plan.
func (p Plan) Options() Options {
	return Options{Sizes: p.Sizes, Count: p.Count, Interval: p.Interval, Timeout: p.Timeout, DF: p.DF, MTU: p.MTU}
}

// Implied turns each answered size's median RTT into the rate the plan's
// medium would need (nil without --medium), the VoIP box report's way:
// request and reply each take half the round trip.
func (p Plan) Implied(res *result.PingRun) []result.PingImplied {
	if p.Medium == nil {
		return nil
	}
	m := *p.Medium
	// The medium's MTU: --mtu, else the route's when it could be an
	// Ethernet's (loopback's 65535 could not), else 1500.
	st := linerate.Stack{IPv6: p.Addr.To4() == nil, MTU: 1500}
	if p.MTUSet || p.MTU >= 68 && p.MTU <= 9216 {
		st.MTU = p.MTU
	}
	var out []result.PingImplied
	for _, s := range res.Sizes {
		ir := result.PingImplied{Size: s.Size, Medium: m.Name, MediumBPS: m.BitRate}
		echo, err := linerate.AnalyzeEcho(m, st, s.Size)
		if err != nil {
			ir.Error = err.Error()
			out = append(out, ir)
			continue
		}
		ir.Fragments, ir.WireBytes, ir.NoGapBytes = len(echo.Request.Fragments), echo.Request.WireBytes, echo.NoGapBytes
		ir.RoundTripWireS, ir.Steps = echo.RoundTripWire, echo.Request.Steps
		if s.Received == 0 {
			ir.Error = "no replies: no RTT to turn into a rate"
		} else {
			ir.RTTP50S = s.RTT.P50.Seconds()
			ir.ImpliedBPS = linerate.ImpliedBPS(ir.WireBytes, ir.RTTP50S)
			ir.ImpliedNoGap = linerate.ImpliedBPS(ir.NoGapBytes, ir.RTTP50S)
			ir.Share = ir.ImpliedBPS / m.BitRate
		}
		out = append(out, ir)
	}
	return out
}
