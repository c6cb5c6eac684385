package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/ping"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// ReassemblyKind is the "kind" of the reassembly probe's JSON document
// (its "schema" is result.Schema; a ping run's is result.KindPing).
const ReassemblyKind = "reassembly-probe"

// pingFlags is what the ping command line asked for, as typed.
type pingFlags struct {
	count             int
	interval, timeout string
	size              string
	sizes             string
	ladder            bool
	mtu               int
	df                bool
	jsonOut           bool
	quiet             bool
	socket            string
	source            string
	ipv4, ipv6        bool
	reassembly        bool
	tries             int
	medium            string
	explain           bool
	saving            *saveFlags
}

// pingPlan is pingFlags checked and converted.
type pingPlan struct {
	host     string
	addr     net.IP
	sizes    []int
	interval time.Duration
	timeout  time.Duration
	socket   result.PingSocketKind
	source   string // -I: an address of this host or an interface name
	mtu      int    // from --mtu, or the route; 0 when unknown
	mtuFlag  bool
	medium   *linerate.Medium
}

func newPingCmd(e *env) *cobra.Command {
	f := pingFlags{saving: &saveFlags{}}
	cmd := &cobra.Command{
		Use:   "ping HOST",
		Short: "ICMP echo: RTT, loss and corruption per payload size, fragment ladders, the reassembly probe",
		Long: `ping sends ICMP echo requests of one or more payload sizes and reports, per size,
sent, received, loss, corrupted payloads, duplicates, late replies and
min/avg/max/mdev with exact p50/p90/p99 (nearest rank over the samples).

It uses a raw ICMP socket (root or CAP_NET_RAW) or else an unprivileged ICMP
socket (net.ipv4.ping_group_range), and says which. Round trips run from the
kernel's transmit timestamp (the request entering the queueing layer,
SO_TIMESTAMPING) to its receive timestamp (SO_TIMESTAMPNS), where the system
gives them, else from right before the send call (as iputils ping does);
docs/ping.md has the details.

--ladder pings both sides of every fragment boundary of the path MTU
(1472/1473, 2952/2953, … 65507 for IPv4 over 1500). --reassembly-probe finds
the largest payload the host answers, without and with DF. --medium turns
each size's median RTT into the bit rate it implies on that medium
(--explain shows the count step by step).`,
		Example: `  wirebench ping 192.0.2.1
  wirebench ping 192.0.2.1 -s 65500 -c 20 --medium eth100 --explain
  wirebench ping 192.0.2.1 --ladder -q
  wirebench ping 192.0.2.1 --reassembly-probe --json
  wirebench ping 192.0.2.1 -s 1472 --label link=usb     # saved with labels (docs/store.md; not the reassembly probe)`,
		Args: exactArgs(1, "one HOST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.saving.check(); err != nil {
				return err
			}
			defer f.saving.close()
			plan, err := planPing(e.ctx, args[0], f, cmd.Flags().Changed("mtu"))
			if err != nil {
				return err
			}
			if f.reassembly {
				return runReassembly(e, plan, f)
			}
			return runPing(e, plan, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.count, "count", "c", 5, "echo requests per size")
	fl.StringVarP(&f.interval, "interval", "i", "1s", "time between requests (seconds, or a duration like 200ms)")
	fl.StringVarP(&f.size, "size", "s", "56", "ICMP payload bytes (like ping -s); up to 65507 for IPv4, 65527 for IPv6")
	fl.StringVar(&f.sizes, "sizes", "", "comma-separated payload sizes, e.g. 56,1472,1473,65500")
	fl.BoolVar(&f.ladder, "ladder", false, "ping the sizes either side of every fragment boundary of the path MTU, up to the largest")
	fl.IntVar(&f.mtu, "mtu", 0, "path MTU for --ladder, fragment counts and --medium (default: the route's; for --medium 1500 when the route's is over 9216)")
	fl.BoolVar(&f.df, "df", false, "set don't-fragment (IPv4 IP_PMTUDISC_DO, IPv6 IPV6_DONTFRAG; Linux only)")
	fl.StringVar(&f.timeout, "timeout", "1s", "how long to wait for each reply (seconds, or a duration)")
	fl.BoolVar(&f.jsonOut, "json", false, "print one JSON document")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no line per reply, only the summary")
	fl.StringVar(&f.socket, "socket", "auto", "ICMP socket: auto (raw, then unprivileged), raw or unprivileged")
	fl.StringVarP(&f.source, "interface", "I", "", "send from this address of this host, or through this interface by name (like ping -I)")
	fl.BoolVarP(&f.ipv4, "ipv4", "4", false, "use IPv4")
	fl.BoolVarP(&f.ipv6, "ipv6", "6", false, "use IPv6")
	fl.BoolVar(&f.reassembly, "reassembly-probe", false, "find the largest payload the host answers, without and with DF")
	fl.IntVar(&f.tries, "tries", 3, "attempts per size before the reassembly probe calls it failed")
	fl.StringVar(&f.medium, "medium", "", "turn each size's median RTT into the implied bit rate on medium `NAME` (see wirebench calc)")
	fl.BoolVar(&f.explain, "explain", false, "show the implied-rate count (or the probe's steps) step by step")
	f.saving.register(cmd)
	return cmd
}

func planPing(ctx context.Context, host string, f pingFlags, mtuSet bool) (pingPlan, error) {
	p := pingPlan{host: host, socket: result.PingSocketKind(f.socket)}
	if err := enumFlag("--socket", f.socket, "auto", string(result.PingSocketRaw), string(result.PingSocketUnprivileged)); err != nil {
		return p, err
	}
	if f.socket == "auto" {
		p.socket = result.PingSocketAuto
	}
	var err error
	if p.interval, err = parseDur(f.interval); err != nil {
		return p, usagef("invalid --interval: %v", err)
	}
	if p.timeout, err = parseDur(f.timeout); err != nil || p.timeout == 0 {
		return p, usagef("invalid --timeout %q: want a positive time", f.timeout)
	}
	if f.count < 1 || f.tries < 1 {
		return p, usagef("--count and --tries must be at least 1")
	}
	if f.ipv4 && f.ipv6 {
		return p, usagef("-4 and -6 exclude each other")
	}
	if mtuSet && (f.mtu < 68 || f.mtu > 65535) {
		return p, usagef("invalid --mtu %d: want 68 to 65535", f.mtu)
	}
	if f.medium != "" {
		m, err := linerate.LookupMedium(f.medium)
		if err != nil {
			return p, usagef("invalid --medium: %v (known: %s)", err, strings.Join(linerate.MediumNames(), ", "))
		}
		p.medium = &m
	}
	if p.addr, err = resolveHost(ctx, host, f.ipv4, f.ipv6); err != nil {
		return p, err
	}
	if ip := net.ParseIP(f.source); ip != nil && (ip.To4() == nil) != (p.addr.To4() == nil) {
		return p, usagef("-I %s and %s (%s) are not the same IP version", f.source, host, p.addr)
	}
	p.source = f.source
	p.mtu, p.mtuFlag = f.mtu, mtuSet
	if p.mtu == 0 {
		if mtu, err := ping.RouteMTU(p.addr); err == nil {
			p.mtu = mtu
		}
	}
	p.sizes, err = pingSizes(f, p)
	return p, err
}

// pingSizes is the list of payload sizes: --ladder, --sizes or -s.
func pingSizes(f pingFlags, p pingPlan) ([]int, error) {
	v6 := p.addr.To4() == nil
	maxp := ping.MaxPayload(v6)
	if f.ladder {
		mtu := p.mtu
		if mtu <= 0 || mtu > 65535 {
			mtu = 1500
		}
		return ping.Ladder(mtu, v6), nil
	}
	list := f.size
	if f.sizes != "" {
		list = f.sizes
	}
	var out []int
	for _, s := range strings.Split(list, ",") {
		n, err := units.ParseSize(s)
		if err != nil {
			return nil, usagef("%v", err)
		}
		if n > int64(maxp) {
			return nil, usagef("size %d is over the largest echo payload, %d bytes", n, maxp)
		}
		out = append(out, int(n))
	}
	return out, nil
}

func resolveHost(ctx context.Context, host string, only4, only6 bool) (net.IP, error) {
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
	for _, ip := range ips { // IPv4 first unless -6
		if ip.To4() != nil {
			return ip.To4(), nil
		}
	}
	return ips[0], nil
}

func runPing(e *env, p pingPlan, f pingFlags) error {
	cfg := ping.Config{Target: p.addr, Socket: p.socket, Source: p.source}
	if !f.jsonOut && !f.quiet {
		cfg.OnEvent = func(ev ping.Event) { writePingEvent(e.stdout, p, ev) }
	}
	opts := ping.Options{Sizes: p.sizes, Count: f.count, Interval: p.interval, Timeout: p.timeout, DF: f.df, MTU: p.mtu}
	if !f.jsonOut {
		// Once the socket is open: a run that cannot open one prints only
		// the error.
		opts.OnOpen = func(result.PingSocket) {
			fmt.Fprintf(e.stdout, "PING %s (%s): %d size(s), %d request(s) each\n", p.host, p.addr, len(p.sizes), f.count)
		}
	}
	res, err := ping.Run(e.ctx, p.host, cfg, opts)
	if err != nil {
		if errors.Is(err, ping.ErrNotSupported) {
			return usagef("%v", err)
		}
		return err
	}
	var implied []result.PingImplied
	if p.medium != nil {
		implied = impliedRates(*p.medium, res, p)
	}
	doc := result.Ping{Schema: result.Schema, Kind: result.KindPing, PingRun: res, Implied: implied}
	id, w := f.saving.save(e, result.KindPing, p.host, report.PingSummary(res), res.StartedAt, doc)
	if w != "" {
		doc.Warnings = []string{w}
	}
	doc.RunID = id
	if f.jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	defer f.saving.announce(e, id, formatText)
	return report.WritePing(e.stdout, res, implied, f.explain)
}

func writePingEvent(w io.Writer, p pingPlan, ev ping.Event) {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
	switch ev.Outcome {
	case ping.OutcomeReply:
		fmt.Fprintf(w, "%d bytes from %s: seq=%d time=%s ms\n", ev.Size, ev.From, ev.Seq, ms(ev.RTT))
	case ping.OutcomeLate, ping.OutcomeDuplicate:
		fmt.Fprintf(w, "%d bytes from %s: seq=%d time=%s ms (%s)\n", ev.Size, ev.From, ev.Seq, ms(ev.RTT), ev.Outcome)
	case ping.OutcomeCorrupt:
		fmt.Fprintf(w, "%d bytes from %s: seq=%d payload differs from what was sent (corrupt)\n", ev.Size, ev.From, ev.Seq)
	case ping.OutcomeTooBig:
		fmt.Fprintf(w, "size %d seq=%d: %s\n", ev.Size, ev.Seq, result.PingNeedsFragmentation(ev.PathMTU))
	case ping.OutcomeUnreachable:
		fmt.Fprintf(w, "size %d seq=%d: unreachable (from %s)\n", ev.Size, ev.Seq, ev.From)
	case ping.OutcomeSendError:
		fmt.Fprintf(w, "size %d seq=%d: %v\n", ev.Size, ev.Seq, ev.Err)
	}
}

// impliedRates turns each answered size's median RTT into the rate the
// medium would need, the VoIP box report's way (request and reply each take
// half the round trip).
func impliedRates(m linerate.Medium, res *result.PingRun, p pingPlan) []result.PingImplied {
	// The medium's MTU: --mtu, else the route's when it could be an
	// Ethernet's (loopback's 65535 could not), else 1500.
	st := linerate.Stack{IPv6: p.addr.To4() == nil, MTU: 1500}
	if p.mtuFlag || p.mtu >= 68 && p.mtu <= 9216 {
		st.MTU = p.mtu
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

func runReassembly(e *env, p pingPlan, f pingFlags) error {
	cfg := ping.Config{Target: p.addr, Socket: p.socket, Source: p.source}
	if !f.jsonOut {
		fmt.Fprintf(e.stdout, "reassembly probe %s (%s): %d tries per size, %v timeout each\n", p.host, p.addr, f.tries, p.timeout)
	}
	res, err := ping.Reassembly(e.ctx, p.host, cfg, p.mtu, f.tries, p.timeout)
	if err != nil {
		return err
	}
	if f.jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Schema string `json:"schema"`
			Kind   string `json:"kind"`
			*ping.ReassemblyResult
		}{result.Schema, ReassemblyKind, res})
	}
	fmt.Fprintf(e.stdout, "socket: %s; ladder for path MTU %d\n", report.PingSocketWords(res.Socket, 0), res.PathMTU)
	writeSearch(e.stdout, "without DF", res.WithoutDF, f.explain)
	if res.WithDF != nil {
		writeSearch(e.stdout, "with DF", *res.WithDF, f.explain)
	} else {
		fmt.Fprintf(e.stdout, "with DF: not searched: %s\n", res.DFError)
	}
	if res.Error != "" {
		fmt.Fprintf(e.stdout, "stopped early: %s\n", res.Error)
	}
	return nil
}

func writeSearch(w io.Writer, label string, s ping.SearchResult, explain bool) {
	switch {
	case s.Largest < 0:
		fmt.Fprintf(w, "%s: no size answered; first failing %d bytes (%s)\n", label, s.FirstFailing, s.FailReason)
	case s.FirstFailing == 0:
		fmt.Fprintf(w, "%s: largest answered %d bytes (every size tried was answered)\n", label, s.Largest)
	default:
		fmt.Fprintf(w, "%s: largest answered %d bytes; first failing %d bytes (%s)\n", label, s.Largest, s.FirstFailing, s.FailReason)
	}
	if explain {
		for _, st := range s.Steps {
			verdict := "answered"
			if !st.Answered {
				verdict = "failed: " + st.Reason
			}
			fmt.Fprintf(w, "  %-6s %5d bytes, %d tr%s: %s\n", st.Phase, st.Size, st.Tries, map[bool]string{true: "y", false: "ies"}[st.Tries == 1], verdict)
		}
	}
}
