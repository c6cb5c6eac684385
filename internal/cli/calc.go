package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/calc"
	"github.com/wirebench/wirebench/internal/linerate"
)

// calcConfig is what the calc command was asked.
type calcConfig struct {
	medium, proto, payload, frame string
	step, aggregate, mtu          int
	vlan, ipv6, tcpTS             bool
	explain, compare, json        bool
	rtt                           time.Duration
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
  wirebench calc --compare eth100 usb2-eem --aggregate 2`,
		RunE: func(_ *cobra.Command, args []string) error { return runCalc(e, c, args) },
	}
	f := cmd.Flags()
	f.StringVar(&c.medium, "medium", "", "medium `NAME` (see above)")
	f.StringVar(&c.proto, "proto", "udp", "protocol: udp, tcp, icmp (echo) or raw (L2 payload)")
	f.StringVar(&c.payload, "payload", "", "payload `SIZES`: 1470, a range 64-1518 or a list 64,128,1470 (default: 1470 UDP, the MSS for TCP, 56 ICMP)")
	f.StringVar(&c.frame, "frame", "", "Ethernet frame `SIZES` counted header to FCS (RFC 2544), instead of --payload; implies --proto raw")
	f.IntVar(&c.step, "step", 0, "step of a payload range (default: 16 steps)")
	f.IntVar(&c.aggregate, "aggregate", 1, "frames per USB transfer (usb*-eem, usb*-ncm, usb*-rndis)")
	f.IntVar(&c.mtu, "mtu", 1500, "IP MTU in bytes (jumbo allowed)")
	f.BoolVar(&c.vlan, "vlan", false, "frames carry an 802.1Q tag")
	f.BoolVar(&c.ipv6, "ipv6", false, "IPv6 instead of IPv4")
	f.BoolVar(&c.tcpTS, "tcp-timestamps", true, "TCP carries the timestamps option")
	f.BoolVar(&c.explain, "explain", false, "show the derivation step by step")
	f.BoolVar(&c.compare, "compare", false, "compare the two media given as arguments")
	f.BoolVar(&c.json, "json", false, "print JSON (see docs/calc.md)")
	f.DurationVar(&c.rtt, "rtt", 0, "with --proto icmp: a measured round trip, turned into the line rate it implies")
	return cmd
}

// parseCalc turns the command line into what to work out.
func parseCalc(c calcConfig, args []string) (calc.Plan, error) {
	p := calc.Plan{RTT: c.rtt}
	names, err := calcMediaNames(c, args)
	if err != nil {
		return p, err
	}
	aggregated := false
	for _, n := range names {
		m, err := linerate.LookupMedium(n)
		if err != nil {
			return p, usagef("--medium: %v", err)
		}
		// With --compare, --aggregate applies to the media that can aggregate.
		if am, err := m.WithAggregate(c.aggregate); err == nil {
			m, aggregated = am, true
		} else if !c.compare {
			return p, usagef("--aggregate: %v", err)
		}
		p.Media = append(p.Media, m)
	}
	if !aggregated {
		return p, usagef("--aggregate: none of %s can aggregate frames: only usb*-eem, usb*-ncm and usb*-rndis can", strings.Join(names, ", "))
	}
	if err := enumFlag("--proto", strings.ToLower(c.proto), "udp", "tcp", "icmp", "raw"); err != nil {
		return p, err
	}
	t, err := linerate.ParseTransport(strings.ToLower(c.proto))
	if err != nil {
		return p, usagef("--proto: %v", err)
	}
	if c.frame != "" {
		if c.payload != "" {
			return p, usagef("--frame and --payload: give one of them")
		}
		t = linerate.Raw
	}
	if c.rtt < 0 || (c.rtt > 0 && t != linerate.ICMP) {
		return p, usagef("--rtt: only with --proto icmp, and positive")
	}
	p.Stack = linerate.Stack{IPv6: c.ipv6, Transport: t, TCPTimestamps: c.tcpTS, VLAN: c.vlan, MTU: c.mtu}
	if err := p.Stack.Validate(0); err != nil {
		return p, usagef("--mtu: %v", err)
	}
	return p, parseCalcSizes(c, &p)
}

func calcMediaNames(c calcConfig, args []string) ([]string, error) {
	switch {
	case c.compare && len(args) != 2:
		return nil, usagef("--compare: expected two media, like --compare eth100 usb2-eem, got %d argument(s)", len(args))
	case c.compare && c.medium != "":
		return nil, usagef("--compare takes the two media as arguments; leave out --medium")
	case c.compare:
		return args, nil
	case len(args) != 0:
		return nil, usagef("unexpected argument %q (did you mean --compare?)", args[0])
	case c.medium == "":
		return nil, usagef("--medium is required: one of %s", strings.Join(linerate.MediumNames(), ", "))
	}
	return []string{c.medium}, nil
}

func parseCalcSizes(c calcConfig, p *calc.Plan) error {
	spec, flagName := c.payload, "--payload"
	if c.frame != "" {
		spec, flagName = c.frame, "--frame"
	}
	if spec == "" {
		p.Payloads = []int{p.Stack.DefaultPayload()}
		p.Sizes = p.Payloads
		return nil
	}
	sizes, err := calc.ParseSizes(spec, c.step)
	if err != nil {
		return usagef("%s: %v", flagName, err)
	}
	for _, n := range sizes {
		pl := n
		if c.frame != "" {
			if pl, err = linerate.RawPayload(p.Stack, n); err != nil {
				return usagef("--frame: %v", err)
			}
		}
		if err := p.Stack.Validate(pl); err != nil {
			return usagef("%s: %v", flagName, err)
		}
		p.Payloads = append(p.Payloads, pl)
		p.Sizes = append(p.Sizes, n)
	}
	return nil
}

func runCalc(e *env, c calcConfig, args []string) error {
	p, err := parseCalc(c, args)
	if err != nil {
		return err
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
	return writeCalcText(e.stdout, doc, c)
}

func writeCalcText(w io.Writer, d calc.Doc, c calcConfig) error {
	for _, m := range d.Media {
		fmt.Fprintf(w, "medium %s: %s %s", m.Name, linerate.MediumRate(m.BitRateBPS), m.Kind)
		if m.Class != "" {
			fmt.Fprintf(w, " (%s, %d frame(s) per transfer; bus ceiling %s)", m.Class, m.Aggregate, linerate.MediumRate(m.BusCeilingBPS))
		}
		fmt.Fprintf(w, "\n  %s\n", m.Source)
	}
	if len(d.Results) > 0 {
		fmt.Fprintf(w, "stack: %s\n", d.Results[0].Stack)
	}
	if len(d.Results) == 1 || (len(d.Results) == len(d.Media) && !c.compare) {
		writeCalcSingle(w, d.Results[0], c.explain)
		return nil
	}
	writeCalcTable(w, d, c)
	return nil
}

func writeCalcSingle(w io.Writer, r calc.Result, explain bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "payload:\t%d bytes in %s\n", r.Payload, framesWord(len(r.Fragments)))
	fmt.Fprintf(tw, "max goodput:\t%s\n", mbit(r.GoodputBPS))
	fmt.Fprintf(tw, "frames/s:\t%s (datagrams/s %s)\n", commas(r.FramesPerSecond, 2), commas(r.PacketsPerSecond, 2))
	fmt.Fprintf(tw, "wire efficiency:\t%.2f %%\n", r.Efficiency*100)
	fmt.Fprintf(tw, "limited by:\t%s\n", r.Limit)
	tw.Flush()
	if explain {
		fmt.Fprintln(w, "derivation:")
		for i, s := range r.Steps {
			fmt.Fprintf(w, "  %d) %s\n", i+1, s)
		}
	}
	if r.Echo != nil {
		writeCalcEcho(w, r)
	}
}

// writeCalcEcho prints the echo both ways: without the inter-frame gap (a
// common miscount) and with it.
func writeCalcEcho(w io.Writer, r calc.Result) {
	e, n := r.Echo, len(r.Fragments)
	fmt.Fprintf(w, "echo request + reply of %d bytes (each %d bytes of IP data in %s):\n", r.Payload, r.IPData, framesWord(n))
	fmt.Fprintf(w, "  counted without the inter-frame gap:    %d + %d × %s = %s bytes each way\n", r.IPData, n, trimNum(e.NoGapOverhead), trimNum(e.NoGapBytes))
	fmt.Fprintf(w, "  correct, with the inter-frame gap:      %d + %d × %s = %s bytes each way\n", r.IPData, n, trimNum(e.WireOverhead), trimNum(e.WireBytes))
	fmt.Fprintf(w, "  shortest round trip on the wire (request then reply, correct count): %.3f ms\n", e.RoundTripWireS*1e3)
	if e.RTTS > 0 {
		fmt.Fprintf(w, "  a %s round trip, half each way: %s counted without the inter-frame gap; %s correct (%.1f %% of the medium)\n",
			time.Duration(e.RTTS*float64(time.Second)), mbit(e.ImpliedNoGapBPS), mbit(e.ImpliedBPS), e.ImpliedShareOfMedium*100)
	}
}

func writeCalcTable(w io.Writer, d calc.Doc, c calcConfig) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	sizeCol := "payload"
	if c.frame != "" {
		sizeCol = "frame"
	}
	fmt.Fprintf(tw, "medium\t%s\tframes\tgoodput Mbit/s\tframes/s\tefficiency %%\t\n", sizeCol)
	for _, r := range d.Results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%s\t%.2f\t\n", r.Medium, r.Size, len(r.Fragments), r.GoodputBPS/1e6, commas(r.FramesPerSecond, 0), r.Efficiency*100)
	}
	tw.Flush()
	if c.compare && len(d.Results) == 2 && d.Results[0].GoodputBPS > 0 {
		a, b := d.Results[0], d.Results[1]
		fmt.Fprintf(w, "%s allows %.3f× the goodput of %s\n", b.Medium, b.GoodputBPS/a.GoodputBPS, a.Medium)
	}
	if c.explain {
		for _, r := range d.Results {
			fmt.Fprintf(w, "derivation for %s, %d bytes:\n", r.Medium, r.Size)
			for i, s := range r.Steps {
				fmt.Fprintf(w, "  %d) %s\n", i+1, s)
			}
		}
	}
}

func framesWord(n int) string {
	if n == 1 {
		return "1 frame"
	}
	return strconv.Itoa(n) + " frames"
}

// mbit prints a bit rate in Mbit/s with two decimals.
func mbit(bps float64) string { return fmt.Sprintf("%.2f Mbit/s", bps/1e6) }

// trimNum prints v in the fewest digits that read back exactly.
func trimNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// commas prints v rounded to decimals places with thousands separators.
func commas(v float64, decimals int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}
