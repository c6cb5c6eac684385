package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wirebench/wirebench/internal/ping"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// ReassemblyKind is the "kind" of the reassembly probe's JSON document
// (its "schema" is result.Schema; a ping run's is result.KindPing).
const ReassemblyKind = ping.ReassemblyKind

// pingFlags is what the ping command line asked for, as typed.
type pingFlags struct {
	ping.Command
	jsonOut    bool
	quiet      bool
	reassembly bool
	explain    bool
	saving     *saveFlags
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
			o := f.Command
			o.MTUSet = cmd.Flags().Changed("mtu")
			plan, err := o.Plan(e.ctx, args[0])
			if ce := (ping.ConfigError{}); errors.As(err, &ce) {
				return usageError{err}
			} else if err != nil {
				return err
			}
			if f.reassembly {
				return runReassembly(e, plan, f)
			}
			return runPing(e, plan, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.Count, "count", "c", 5, "echo requests per size")
	fl.StringVarP(&f.Interval, "interval", "i", "1s", "time between requests (seconds, or a duration like 200ms)")
	fl.StringVarP(&f.Size, "size", "s", "56", "ICMP payload bytes (like ping -s); up to 65507 for IPv4, 65527 for IPv6")
	fl.StringVar(&f.Sizes, "sizes", "", "comma-separated payload sizes, e.g. 56,1472,1473,65500")
	fl.BoolVar(&f.Ladder, "ladder", false, "ping the sizes either side of every fragment boundary of the path MTU, up to the largest")
	fl.IntVar(&f.MTU, "mtu", 0, "path MTU for --ladder, fragment counts and --medium (default: the route's; for --medium 1500 when the route's is over 9216)")
	fl.BoolVar(&f.DF, "df", false, "set don't-fragment (IPv4 IP_PMTUDISC_DO, IPv6 IPV6_DONTFRAG; Linux only)")
	fl.StringVar(&f.Timeout, "timeout", "1s", "how long to wait for each reply (seconds, or a duration)")
	fl.BoolVar(&f.jsonOut, "json", false, "print one JSON document")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no line per reply, only the summary")
	fl.StringVar(&f.Socket, "socket", "auto", "ICMP socket: auto (raw, then unprivileged), raw or unprivileged")
	fl.StringVarP(&f.Source, "interface", "I", "", "send from this address of this host, or through this interface by name (like ping -I)")
	fl.BoolVarP(&f.IPv4, "ipv4", "4", false, "use IPv4")
	fl.BoolVarP(&f.IPv6, "ipv6", "6", false, "use IPv6")
	fl.BoolVar(&f.reassembly, "reassembly-probe", false, "find the largest payload the host answers, without and with DF")
	fl.IntVar(&f.Tries, "tries", 3, "attempts per size before the reassembly probe calls it failed")
	fl.StringVar(&f.Medium, "medium", "", "turn each size's median RTT into the implied bit rate on medium `NAME` (see wirebench calc)")
	fl.BoolVar(&f.explain, "explain", false, "show the implied-rate count (or the probe's steps) step by step")
	f.saving.register(cmd)
	return cmd
}

func runPing(e *env, p ping.Plan, f pingFlags) error {
	cfg, opts := p.Config(), p.Options()
	if !f.jsonOut && !f.quiet {
		cfg.OnEvent = func(ev ping.Event) { ping.WriteEvent(e.stdout, ev) }
	}
	if !f.jsonOut {
		// Once the socket is open: a run that cannot open one prints only
		// the error.
		opts.OnOpen = func(result.PingSocket) {
			fmt.Fprintf(e.stdout, "PING %s (%s): %s, %s each\n", p.Host, p.Addr, units.Plural(len(p.Sizes), "size"), units.Plural(p.Count, "request"))
		}
	}
	res, err := ping.Run(e.ctx, p.Host, cfg, opts)
	if errors.Is(err, ping.ErrNotSupported) {
		return usagef("%v", err)
	} else if err != nil {
		return err
	}
	implied := p.Implied(res)
	doc := result.Ping{Schema: result.Schema, Kind: result.KindPing, PingRun: res, Implied: implied}
	id, w := f.saving.save(e, result.KindPing, p.Host, report.PingSummary(res), res.StartedAt, doc)
	if w != "" {
		doc.Warnings = []string{w}
	}
	doc.RunID = id
	if f.jsonOut {
		return writeJSONDoc(e.stdout, doc)
	}
	defer f.saving.announce(e, id, formatText)
	return report.WritePing(e.stdout, res, implied, f.explain)
}

func runReassembly(e *env, p ping.Plan, f pingFlags) error {
	if !f.jsonOut {
		fmt.Fprintf(e.stdout, "reassembly probe %s (%s): %d tries per size, %v timeout each\n", p.Host, p.Addr, p.Tries, p.Timeout)
	}
	res, err := ping.Reassembly(e.ctx, p.Host, p.Config(), p.MTU, p.Tries, p.Timeout)
	if err != nil {
		return err
	}
	if f.jsonOut {
		return writeJSONDoc(e.stdout, res.Doc())
	}
	ping.WriteReassembly(e.stdout, res, f.explain)
	return nil
}
