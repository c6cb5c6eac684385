package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/calc"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/units"
)

// linkFlags put a result against the line rate of the medium
// (--medium, --link-rate), as `wirebench calc` computes it.
type linkFlags struct {
	medium   string
	linkRate string
	mtu      int
	ipv6     bool
	vlan     bool
}

func (l *linkFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&l.medium, "medium", "", "read results against the line rate of medium `NAME` (eth100, eth1g, usb2-ecm, ...; see wirebench calc --help)")
	fl.StringVar(&l.linkRate, "link-rate", "", "read results against an Ethernet link of `RATE` bit/s (e.g. 100M)")
	fl.IntVar(&l.mtu, "mtu", 1500, "IP MTU of the medium, for --medium/--link-rate")
	fl.BoolVar(&l.vlan, "vlan", false, "frames carry an 802.1Q tag, for --medium/--link-rate")
}

// resolve turns the flags into a placer (calc.Placer); nil places nothing.
func (l *linkFlags) resolve() (*calc.Placer, error) {
	name := l.medium
	switch {
	case l.medium != "" && l.linkRate != "":
		return nil, usagef("choose one of --medium and --link-rate")
	case l.linkRate != "":
		r, err := units.ParseRate(l.linkRate)
		if err != nil || r.PPS {
			return nil, usagef("invalid --link-rate %q: want a bit rate like 100M", l.linkRate)
		}
		name = fmt.Sprintf("custom:%.0f,38,64,0", r.Value)
	case l.medium == "":
		return nil, nil
	}
	m, err := linerate.LookupMedium(name)
	if err != nil {
		return nil, usageError{err} // the error lists the known media
	}
	return &calc.Placer{Medium: m, Stack: linerate.Stack{VLAN: l.vlan, MTU: l.mtu}}, nil
}
