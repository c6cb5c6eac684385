package labctl

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/units"
)

// UpOptions are what `lab up` is asked for, as typed: UpOptions.Config and
// UpOptions.RelayPlan check them and turn them into a lab to build. Every
// error they return is a mistake in the options.
type UpOptions struct {
	Net    string // IPv4 network inside 198.18.0.0/15
	Medium string // an Ethernet medium's name, or ""
	Rate   string // a bit rate, tc style (100mbit) or wirebench's (100M), or ""
	Burst  int    // the shaper's bucket in bytes (0 = its default)
	MTU    int
	// Model is the relay's device model; ModelSet says it was given (an
	// empty model is a relay that changes nothing).
	Model      string
	ModelSet   bool
	ModelPorts []int // nil: DefaultModelPorts
	ModelBoth  bool
	Wire       string // filled, tbf or exact
}

// Config turns the options into a netlab configuration (shaped both ways;
// with a model a router lab whose only path is a relay in r) and the
// medium's name to record ("" when shaped by rate).
func (o UpOptions) Config(name string) (netlab.Config, string, error) {
	cfg := netlab.Config{Lab: name, MTU: o.MTU, Burst: o.Burst, ShapeBothWays: true, Router: o.ModelSet, RelayOnly: o.ModelSet}
	p, err := netip.ParsePrefix(o.Net)
	if err != nil {
		return cfg, "", fmt.Errorf("invalid --net %q: want a network like 198.18.0.0/24", o.Net)
	}
	if err := netlab.ValidateNet(p); err != nil {
		return cfg, "", fmt.Errorf("invalid --net: %v", strings.TrimPrefix(err.Error(), "netlab: "))
	}
	cfg.Net = p
	medium := o.Medium
	switch {
	case o.Medium != "" && o.Rate != "":
		return cfg, "", errors.New("choose one of --medium and --rate")
	case o.Medium != "":
		m, err := linerate.LookupMedium(o.Medium)
		if err != nil {
			return cfg, "", fmt.Errorf("%v (known media: %s)", err, strings.Join(linerate.MediumNames(), ", "))
		}
		if m.Kind != linerate.Ethernet {
			return cfg, "", fmt.Errorf("--medium %s: the lab emulates Ethernet wires only (eth10, eth100, eth1g, ...); for other media use a device model, --model rate=...,overhead=...", o.Medium)
		}
		cfg.RateBPS = uint64(m.BitRate)
	case o.Rate != "":
		s := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o.Rate)), "bit") // tc style: 100mbit
		r, err := units.ParseRate(s)
		if err != nil || r.PPS || r.Value < 1000 || r.Value > 100e9 {
			return cfg, "", fmt.Errorf("invalid --rate %q: want a bit rate from 1k to 100G, like 100mbit or 100M", o.Rate)
		}
		cfg.RateBPS = uint64(r.Value)
		medium = ""
	}
	if o.Burst != 0 && cfg.RateBPS == 0 {
		return cfg, "", errors.New("--burst needs --medium or --rate")
	}
	w, err := netlab.ParseWire(o.Wire)
	if err != nil {
		return cfg, "", fmt.Errorf("invalid --wire %q: want filled, tbf or exact", o.Wire)
	}
	cfg.Wire = w
	if w == netlab.WireExact {
		switch {
		case cfg.RateBPS == 0:
			return cfg, "", errors.New("--wire exact needs --medium or --rate")
		case o.ModelSet:
			return cfg, "", errors.New("--wire exact and --model both need host r; choose one")
		case o.Burst != 0:
			return cfg, "", errors.New("--burst is tbf's bucket; the exact wire has none")
		}
		cfg.Router = true
	}
	if err := cfg.Validate(); err != nil {
		return cfg, "", errors.New(strings.TrimPrefix(err.Error(), "netlab: "))
	}
	return cfg, medium, nil
}

// RelayPlan checks the model options; nil means no relay.
func (o UpOptions) RelayPlan() (*RelayPlan, error) {
	if !o.ModelSet {
		if o.ModelPorts != nil || o.ModelBoth {
			return nil, errors.New("--model-port and --model-both need --model")
		}
		return nil, nil
	}
	if _, err := model.Parse(o.Model); err != nil {
		return nil, fmt.Errorf("invalid --model: %s", strings.TrimPrefix(err.Error(), "model: "))
	}
	ports := o.ModelPorts
	if ports == nil {
		ports = DefaultModelPorts
	}
	if len(ports) == 0 {
		return nil, errors.New("--model-port: give at least one port")
	}
	for i, p := range ports {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("invalid --model-port %d: want 1-65535", p)
		}
		if slices.Contains(ports[:i], p) {
			return nil, fmt.Errorf("--model-port %d given twice", p)
		}
	}
	return &RelayPlan{Spec: o.Model, Both: o.ModelBoth, Ports: ports}, nil
}

// UpConfig checks the options and builds lab name's `lab up`
// configuration, but for Self and Leftovers. Every error is a mistake in
// them.
func (o UpOptions) UpConfig(name string) (UpConfig, error) {
	cfg, medium, err := o.Config(name)
	if err != nil {
		return UpConfig{}, err
	}
	plan, err := o.RelayPlan()
	if err != nil {
		return UpConfig{}, err
	}
	return UpConfig{Lab: cfg, Medium: medium, Relays: plan}, nil
}
