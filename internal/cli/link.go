package cli

import (
	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/calc"
)

// linkFlags put a result against the line rate of the medium
// (--medium, --link-rate), as `wirebench calc` computes it.
type linkFlags struct{ link calc.LinkOptions }

func (l *linkFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&l.link.Medium, "medium", "", "read results against the line rate of medium `NAME` (eth100, eth1g, usb2-ecm, ...; see wirebench calc --help)")
	fl.StringVar(&l.link.LinkRate, "link-rate", "", "read results against an Ethernet link of `RATE` bit/s (e.g. 100M)")
	fl.IntVar(&l.link.MTU, "mtu", 1500, "IP MTU of the medium, for --medium/--link-rate")
	fl.BoolVar(&l.link.VLAN, "vlan", false, "frames carry an 802.1Q tag, for --medium/--link-rate")
}

// resolve turns the flags into a placer (calc.Placer); nil places nothing.
func (l *linkFlags) resolve() (*calc.Placer, error) {
	p, err := l.link.Placer()
	return p, usage(err)
}
