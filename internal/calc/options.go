package calc

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/units"
)

// Options are what the calc command is asked, as typed.
type Options struct {
	Medium, Proto, Payload, Frame string
	Step, Aggregate, MTU          int
	VLAN, IPv6, TCPTimestamps     bool
	Explain, Compare              bool
	RTT                           time.Duration
	// Measured is a measured figure to place on the medium: goodput
	// ("83.6M") or datagrams per second ("7000pps"); empty for none.
	Measured string
}

// protos are the values --proto takes.
var protos = []string{"udp", "tcp", "icmp", "raw"}

// Plan turns the options and the command's arguments (the two media of
// --compare) into what to work out. Every error is a mistake in them.
func (c Options) Plan(args []string) (Plan, error) {
	p := Plan{RTT: c.RTT}
	names, err := c.mediaNames(args)
	if err != nil {
		return p, err
	}
	aggregated := false
	for _, n := range names {
		m, err := linerate.LookupMedium(n)
		if err != nil {
			return p, fmt.Errorf("--medium: %v", err)
		}
		// With --compare, --aggregate applies to the media that can aggregate.
		if am, err := m.WithAggregate(c.Aggregate); err == nil {
			m, aggregated = am, true
		} else if !c.Compare {
			return p, fmt.Errorf("--aggregate: %v", err)
		}
		p.Media = append(p.Media, m)
	}
	if !aggregated {
		return p, fmt.Errorf("--aggregate: none of %s can aggregate frames: only usb*-eem, usb*-ncm and usb*-rndis can", strings.Join(names, ", "))
	}
	if proto := strings.ToLower(c.Proto); !slices.Contains(protos, proto) {
		return p, fmt.Errorf("invalid --proto %q: want one of %s", proto, strings.Join(protos, ", "))
	}
	t, err := linerate.ParseTransport(strings.ToLower(c.Proto))
	if err != nil {
		return p, fmt.Errorf("--proto: %v", err)
	}
	if c.Frame != "" {
		if c.Payload != "" {
			return p, errors.New("--frame and --payload: give one of them")
		}
		t = linerate.Raw
	}
	if c.RTT < 0 || (c.RTT > 0 && t != linerate.ICMP) {
		return p, errors.New("--rtt: only with --proto icmp, and positive")
	}
	p.Stack = linerate.Stack{IPv6: c.IPv6, Transport: t, TCPTimestamps: c.TCPTimestamps, VLAN: c.VLAN, MTU: c.MTU}
	if err := p.Stack.Validate(0); err != nil {
		return p, fmt.Errorf("--mtu: %v", err)
	}
	if err := c.sizes(&p); err != nil {
		return p, err
	}
	return p, c.measured(&p)
}

// measured fills in p's measured figure from --measured: one figure, so
// one medium and one payload size; an echo's round trip is --rtt's.
func (c Options) measured(p *Plan) error {
	if c.Measured == "" {
		return nil
	}
	r, err := units.ParseRate(c.Measured)
	if err != nil {
		return fmt.Errorf("--measured: %v", err)
	}
	switch {
	case len(p.Media) != 1:
		return errors.New("--measured places one figure on one medium: leave out --compare")
	case len(p.Payloads) != 1:
		return errors.New("--measured places one figure: give one payload size (the one it was measured with)")
	case p.Stack.Transport == linerate.ICMP:
		return errors.New("--measured: an echo's round trip is placed with --rtt")
	case p.Payloads[0] <= 0:
		return errors.New("--measured: the payload must be at least 1 byte")
	}
	p.Measured, p.MeasuredAsTyped = &r, strings.TrimSpace(c.Measured)
	return nil
}

// mediaNames are the media asked for: --medium, or --compare's two.
func (c Options) mediaNames(args []string) ([]string, error) {
	switch {
	case c.Compare && len(args) != 2:
		return nil, fmt.Errorf("--compare: expected two media, like --compare eth100 usb2-eem, got %s", units.Plural(len(args), "argument"))
	case c.Compare && c.Medium != "":
		return nil, errors.New("--compare takes the two media as arguments; leave out --medium")
	case c.Compare:
		return args, nil
	case len(args) != 0:
		return nil, fmt.Errorf("unexpected argument %q (did you mean --compare?)", args[0])
	case c.Medium == "":
		return nil, fmt.Errorf("--medium is required: one of %s", strings.Join(linerate.MediumNames(), ", "))
	}
	return []string{c.Medium}, nil
}

// sizes fills in p's payloads (and sizes as given) from --payload or
// --frame.
func (c Options) sizes(p *Plan) error {
	spec, flagName := c.Payload, "--payload"
	if c.Frame != "" {
		spec, flagName = c.Frame, "--frame"
	}
	if spec == "" {
		p.Payloads = []int{p.Stack.DefaultPayload()}
		p.Sizes = p.Payloads
		return nil
	}
	sizes, err := ParseSizes(spec, c.Step)
	if err != nil {
		return fmt.Errorf("%s: %v", flagName, err)
	}
	for _, n := range sizes {
		pl := n
		if c.Frame != "" {
			if pl, err = linerate.RawPayload(p.Stack, n); err != nil {
				return fmt.Errorf("--frame: %v", err)
			}
		}
		if err := p.Stack.Validate(pl); err != nil {
			return fmt.Errorf("%s: %v", flagName, err)
		}
		p.Payloads = append(p.Payloads, pl)
		p.Sizes = append(p.Sizes, n)
	}
	return nil
}
