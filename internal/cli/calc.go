package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/calc"
	"github.com/wirebench/wirebench/internal/linerate"
)

// calcConfig is what the calc command was asked.
type calcConfig struct {
	calc.Options
	json bool
}

// CalcKind is the "kind" of calc's JSON document (docs/calc.md).
const CalcKind = calc.Kind

func newCalcCmd(e *env) *cobra.Command {
	var c calcConfig
	cmd := &cobra.Command{
		Use:   "calc [--compare MEDIUM_A MEDIUM_B]",
		Short: "Work out the highest goodput and frame rate a medium allows",
		Long: `calc works out, from the bytes every layer adds, the highest goodput, frame
rate and wire efficiency a medium allows for a payload size, and with
--explain shows the derivation step by step.

Media: ` + strings.Join(linerate.MediumNames(), ", ") + `.`,
		Example: `  wirebench calc --medium eth100 --proto udp --payload 1470
  wirebench calc --medium eth100 --payload 64-1518 --step 128
  wirebench calc --medium eth1g --frame 64,128,256,512,1024,1280,1518
  wirebench calc --medium eth100 --proto icmp --payload 65500 --explain --rtt 13ms
  wirebench calc --compare eth100 usb2-eem --aggregate 2
  wirebench calc --medium eth100 --payload 1470 --measured 83.6M`,
		RunE: func(_ *cobra.Command, args []string) error { return runCalc(e, c, args) },
	}
	f := cmd.Flags()
	f.StringVar(&c.Medium, "medium", "", "medium `NAME` (see above)")
	f.StringVar(&c.Proto, "proto", "udp", "protocol: udp, tcp, icmp (echo) or raw (L2 payload)")
	f.StringVar(&c.Payload, "payload", "", "payload `SIZES`: 1470, a range 64-1518 or a list 64,128,1470 (default: 1470 UDP, the MSS for TCP, 56 ICMP)")
	f.StringVar(&c.Frame, "frame", "", "Ethernet frame `SIZES` counted header to FCS (RFC 2544), instead of --payload; implies --proto raw")
	f.IntVar(&c.Step, "step", 0, "step of a payload range (default: 16 steps)")
	f.IntVar(&c.Aggregate, "aggregate", 1, "frames per USB transfer (usb*-eem, usb*-ncm, usb*-rndis)")
	f.IntVar(&c.MTU, "mtu", 1500, "IP MTU in bytes (jumbo allowed)")
	f.BoolVar(&c.VLAN, "vlan", false, "frames carry an 802.1Q tag")
	f.BoolVar(&c.IPv6, "ipv6", false, "IPv6 instead of IPv4")
	f.BoolVar(&c.TCPTimestamps, "tcp-timestamps", true, "TCP carries the timestamps option")
	f.BoolVar(&c.Explain, "explain", false, "show the derivation step by step")
	f.BoolVar(&c.Compare, "compare", false, "compare the two media given as arguments")
	f.BoolVar(&c.json, "json", false, "print JSON (see docs/calc.md)")
	f.DurationVar(&c.RTT, "rtt", 0, "with --proto icmp: a measured round trip, turned into the line rate it implies")
	f.StringVar(&c.Measured, "measured", "", "a measured `RATE` (83.6M goodput, or 7000pps) placed on the medium: its share, frame rate, what else fits")
	return cmd
}

func runCalc(e *env, c calcConfig, args []string) error {
	p, err := c.Plan(args)
	if err != nil {
		return usageError{err}
	}
	doc, err := calc.Build(p)
	if err != nil {
		return usagef("%v", err)
	}
	if c.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
		return nil
	}
	return calc.WriteText(e.stdout, doc, c.Options)
}
