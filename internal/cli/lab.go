package cli

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/labctl"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/units"
)

func newLabCmd(e *env) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "A two-host lab without hardware: network namespaces a and b joined by a shaped veth wire",
		Long: `wirebench lab makes a named lab that outlives the command: network namespaces
a (198.18.0.1) and b (198.18.0.2) joined by a veth pair, optionally shaped as an
Ethernet wire in both directions. With --model a third host, r (198.18.0.0
towards a), sits between them and runs "wirebench relay" with that device
model: a reaches b only through it. Run programs in it with "lab exec", remove
it with "lab down". Needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN). See
docs/lab-hosts.md.`,
		Example: `  wirebench lab up --medium eth100
  wirebench lab exec b -- wirebench server &
  wirebench lab exec a -- wirebench client 198.18.0.2 -u -b 100M --medium eth100
  wirebench lab status --json
  wirebench lab down
  wirebench lab up --medium eth100 --model loss=1%,seed=7
  wirebench lab exec a -- wirebench client 198.18.0.0 -u -b 10M
  wirebench lab down --json`,
		Args: exactArgs(0, "a subcommand: up, down, status or exec"),
		RunE: func(c *cobra.Command, _ []string) error { return usagef("lab: choose up, down, status or exec") },
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if err := netlab.ValidateLabName(name); err != nil {
				return usagef("invalid --name: %v", strings.TrimPrefix(err.Error(), "netlab: "))
			}
			return nil
		},
	}
	cmd.PersistentFlags().StringVar(&name, "name", labctl.DefaultName, "lab name (1-16 of a-z, 0-9, _): namespaces wbl-lab-NAME-a and -b")
	cmd.AddCommand(newLabUpCmd(e, &name), newLabDownCmd(e, &name), newLabStatusCmd(e, &name), newLabExecCmd(e, &name),
		newLabWireRunCmd(e), newLabFillRunCmd(e))
	for _, c := range cmd.Commands() {
		c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	}
	return cmd
}

// labUpFlags are `lab up`'s options.
type labUpFlags struct {
	net    string
	medium string
	rate   string
	burst  int
	mtu    int
	// model is --model; modelSet says it was given (an empty model is a
	// relay that changes nothing).
	model      string
	modelSet   bool
	modelPorts []int
	modelBoth  bool
	// wire is --wire: tbf or exact.
	wire string
}

// config turns the flags into a netlab configuration (shaped both ways;
// with --model a router lab whose only path is a relay in r).
func (f labUpFlags) config(name string) (netlab.Config, string, error) {
	cfg := netlab.Config{Lab: name, MTU: f.mtu, Burst: f.burst, ShapeBothWays: true, Router: f.modelSet, RelayOnly: f.modelSet}
	p, err := netip.ParsePrefix(f.net)
	if err != nil {
		return cfg, "", usagef("invalid --net %q: want a network like 198.18.0.0/24", f.net)
	}
	if err := netlab.ValidateNet(p); err != nil {
		return cfg, "", usagef("invalid --net: %v", strings.TrimPrefix(err.Error(), "netlab: "))
	}
	cfg.Net = p
	medium := f.medium
	switch {
	case f.medium != "" && f.rate != "":
		return cfg, "", usagef("choose one of --medium and --rate")
	case f.medium != "":
		m, err := linerate.LookupMedium(f.medium)
		if err != nil {
			return cfg, "", usagef("%v (known media: %s)", err, strings.Join(linerate.MediumNames(), ", "))
		}
		if m.Kind != linerate.Ethernet {
			return cfg, "", usagef("--medium %s: the lab emulates Ethernet wires only (eth10, eth100, eth1g, ...); for other media use a device model, --model rate=...,overhead=...", f.medium)
		}
		cfg.RateBPS = uint64(m.BitRate)
	case f.rate != "":
		s := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(f.rate)), "bit") // tc style: 100mbit
		r, err := units.ParseRate(s)
		if err != nil || r.PPS || r.Value < 1000 || r.Value > 100e9 {
			return cfg, "", usagef("invalid --rate %q: want a bit rate from 1k to 100G, like 100mbit or 100M", f.rate)
		}
		cfg.RateBPS = uint64(r.Value)
		medium = ""
	}
	if f.burst != 0 && cfg.RateBPS == 0 {
		return cfg, "", usagef("--burst needs --medium or --rate")
	}
	w, err := netlab.ParseWire(f.wire)
	if err != nil {
		return cfg, "", usagef("invalid --wire %q: want filled, tbf or exact", f.wire)
	}
	cfg.Wire = w
	if w == netlab.WireExact {
		switch {
		case cfg.RateBPS == 0:
			return cfg, "", usagef("--wire exact needs --medium or --rate")
		case f.modelSet:
			return cfg, "", usagef("--wire exact and --model both need host r; choose one")
		case f.burst != 0:
			return cfg, "", usagef("--burst is tbf's bucket; the exact wire has none")
		}
		cfg.Router = true
	}
	if err := cfg.Validate(); err != nil {
		return cfg, "", usagef("%v", strings.TrimPrefix(err.Error(), "netlab: "))
	}
	return cfg, medium, nil
}

func newLabUpCmd(e *env, name *string) *cobra.Command {
	var f labUpFlags
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Create the lab (first removing what a crashed run left behind)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			f.modelSet = c.Flags().Changed("model")
			if !c.Flags().Changed("model-port") {
				f.modelPorts = nil
			}
			cfg, medium, err := f.config(*name)
			if err != nil {
				return err
			}
			plan, err := f.relayPlan()
			if err != nil {
				return err
			}
			if err := labctl.Available(); err != nil {
				return err
			}
			st, err := labctl.Up(e.ctx, labctl.UpConfig{Lab: cfg, Medium: medium, Relays: plan, Self: selfArgv,
				Leftovers: func(removed []string, ended []int) {
					fmt.Fprintf(e.stderr, "wirebench: removed leftovers of an earlier lab %s: namespaces %s%s\n",
						cfg.Lab, strings.Join(removed, " "), pidNote(ended))
				}})
			if err != nil {
				return err
			}
			printLabUp(e.stdout, st)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "put host r between a and b running wirebench relay with device model `SPEC` (docs/lab.md); a reaches b only through it")
	fl.IntSliceVar(&f.modelPorts, "model-port", labctl.DefaultModelPorts, "UDP (and TCP) ports the relay listens on, one relay each")
	fl.BoolVar(&f.modelBoth, "model-both", false, "apply the model to b -> a as well")
	fl.StringVar(&f.net, "net", netlab.DefaultNet.String(), "IPv4 network inside 198.18.0.0/15 (at most a /30): a gets its .1, b its .2")
	fl.StringVar(&f.medium, "medium", "", "shape both directions as Ethernet medium `NAME` (eth10, eth100, eth1g, ...)")
	fl.StringVar(&f.rate, "rate", "", "shape both directions as an Ethernet wire of this rate (e.g. 100mbit)")
	fl.IntVar(&f.mtu, "mtu", netlab.DefaultMTU, "MTU of the veth pair")
	fl.StringVar(&f.wire, "wire", "filled", "how the wire is emulated: filled (a token bucket whose idle time filler frames use up: exact rates on a busy machine, and a burst after idle leaves at the wire's rate), tbf (the bucket alone: bursts after idle leave at veth speed) or exact (an experimental departure-time forwarder in host r); docs/lab-hosts.md")
	fl.IntVar(&f.burst, "burst", 0, "the shaper's bucket in `BYTES` (default 1 ms of the rate, which absorbs late timers on a busy machine; with --wire tbf that much leaves at veth speed after idle; docs/lab-hosts.md)")
	return cmd
}

// pidNote is "; ended processes PID..." for pids, or "".
func pidNote(pids []int) string {
	if len(pids) == 0 {
		return ""
	}
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprint(p)
	}
	return "; ended processes " + strings.Join(s, " ")
}

// printLabUp says what `lab up` made and what to run where.
func printLabUp(w io.Writer, st labctl.State) {
	a, b := st.Hosts["a"], st.Hosts["b"]
	wire := "unshaped (veth speed)"
	switch {
	case st.Medium != "":
		wire = fmt.Sprintf("shaped as %s (%s each way)", st.Medium, rateText(st.RateBPS))
	case st.RateBPS != 0:
		wire = fmt.Sprintf("shaped as a %s Ethernet wire each way", rateText(st.RateBPS))
	}
	fmt.Fprintf(w, "lab %s is up: %s, MTU %d, net %s, no default route\n", st.Name, wire, st.MTU, st.Net)
	fmt.Fprintf(w, "  a  %-15s namespace %s (%s)\n", a.Addr, a.Namespace, a.Ifname)
	target := b.Addr
	if r, ok := st.Hosts["r"]; ok && (st.Model != nil || st.Wire != nil) {
		if st.Model != nil {
			target = r.Addr
		}
		fmt.Fprintf(w, "  r  %-15s namespace %s (%s towards a; wbl-rb towards b)\n", r.Addr, r.Namespace, r.Ifname)
	}
	fmt.Fprintf(w, "  b  %-15s namespace %s (%s)\n", b.Addr, b.Namespace, b.Ifname)
	if m := st.Model; m != nil {
		dir := "a -> b"
		if m.Both {
			dir = "both ways"
		}
		fmt.Fprintf(w, "  model %q, %s, in wirebench relay (UDP; TCP gets only its delay and rate):\n", m.Spec, dir)
		for _, r := range m.Relays {
			fmt.Fprintf(w, "    %s -> %s  seed %d, pid %d, log %s\n", r.Listen, r.To, r.Seed, r.PID, r.Log)
		}
		fmt.Fprintf(w, "  a reaches b only through the relay: send to %s, not %s (nothing forwards it)\n", target, b.Addr)
	}
	if st.Wire != nil {
		fmt.Fprintf(w, "  exact wire: a forwarder in r (pid %d) gives every frame its departure time; r's kernel forwards nothing\n", st.Wire.PID)
	}
	if st.RateBPS != 0 {
		fmt.Fprintf(w, "  UDP goodput the wire allows at 1470 bytes: %.2f Mbit/s\n",
			netlab.WireGoodput(st.RateBPS, 1470, 28)/1e6)
		frame := st.MTU + netlab.EthernetHeader + netlab.EthernetOverhead
		switch {
		case st.Wire != nil: // no bucket
		case st.Filler != nil:
			fmt.Fprintf(w, "  filled wire: filler frames (pid %d) use the wire's idle time, so a burst after idle leaves at the wire's rate;\n"+
				"  they go to no one (EtherType 0x88b5, dropped by the far end) and show in its interface counters\n", st.Filler.PID)
		case st.Burst > frame:
			fmt.Fprintf(w, "  bucket %d bytes: after idle that much leaves at veth speed (a large ping reads short);\n"+
				"  --burst %d is exact after idle where timers fire on time (docs/lab-hosts.md)\n", st.Burst, frame)
		case st.Burst == frame:
			fmt.Fprintf(w, "  bucket of one frame: exact after idle, but where timers fire late (a busy machine, a VM)\n"+
				"  the wire delivers less than its rate (docs/lab-hosts.md)\n")
		}
	}
	n := labctl.NameFlag(st.Name)
	client := "wirebench client " + target + " -u -b 100M"
	switch {
	case st.Medium != "":
		client += " --medium " + st.Medium
	case st.RateBPS != 0:
		client += " --link-rate " + rateText(st.RateBPS)
	}
	fmt.Fprintf(w, "run:\n  wirebench lab exec%s b -- wirebench server\n  wirebench lab exec%s a -- %s\n", n, n, client)
	down := ""
	if st.Model != nil {
		down = " (prints what the relay did)"
	}
	fmt.Fprintf(w, "see: wirebench lab status%s    remove: wirebench lab down%s%s\n", n, n, down)
}

// rateText formats a bit rate the way --rate reads it back (100M, 1G, 2.5M).
func rateText(bps uint64) string {
	switch {
	case bps >= 1e9 && bps%1e7 == 0:
		return fmt.Sprintf("%gG", float64(bps)/1e9)
	case bps >= 1e6 && bps%1e4 == 0:
		return fmt.Sprintf("%gM", float64(bps)/1e6)
	case bps >= 1e3 && bps%10 == 0:
		return fmt.Sprintf("%gk", float64(bps)/1e3)
	}
	return fmt.Sprint(bps)
}

func newLabDownCmd(e *env, name *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Remove every namespace, link, qdisc and process of the lab; print what its relay did",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			if err := labctl.Available(); err != nil {
				return err
			}
			d, err := labctl.Down(e.ctx, *name)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONDoc(e.stdout, d)
			}
			if len(d.Removed) == 0 {
				fmt.Fprintf(e.stdout, "lab %s: nothing to remove\n", *name)
			} else {
				fmt.Fprintf(e.stdout, "lab %s removed: namespaces %s%s\n", *name, strings.Join(d.Removed, " "), pidNote(d.EndedPIDs))
			}
			for _, r := range d.Relays {
				r.WriteText(e.stdout)
			}
			for _, w := range d.Warnings {
				fmt.Fprintf(e.stdout, "warning: %s\n", w)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, with each relay's closing report")
	return cmd
}

func newLabStatusCmd(e *env, name *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what exists of the lab: namespaces, links, addresses, qdiscs, processes",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			if err := labctl.Available(); err != nil {
				return err
			}
			s, err := labctl.ReadStatus(*name)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONDoc(e.stdout, s)
			}
			printLabStatus(e.stdout, s)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

// printLabStatus writes what exists of a lab.
func printLabStatus(w io.Writer, s labctl.Status) {
	switch s.State {
	case labctl.StateDown:
		fmt.Fprintf(w, "lab %s: down (nothing exists)\n", s.Name)
		return
	case labctl.StatePartial:
		fmt.Fprintf(w, "lab %s: partial, the leftovers of an interrupted run (`wirebench lab up%s` or `lab down%s` removes them)\n",
			s.Name, labctl.NameFlag(s.Name), labctl.NameFlag(s.Name))
	default:
		fmt.Fprintf(w, "lab %s: up since %s, net %s\n", s.Name, s.Config.Created.Format(time.RFC3339), s.Config.Net)
	}
	if s.StateFileError != "" {
		fmt.Fprintf(w, "  state file: %s\n", s.StateFileError)
	}
	for _, ns := range s.Namespaces {
		fmt.Fprintf(w, "  %s\n", ns.Name)
		for _, l := range ns.Links {
			state := "down"
			if l.Up {
				state = "up"
			}
			q := l.Qdisc
			if l.RateBPS != 0 {
				q += " " + rateText(l.RateBPS) + "bit/s"
			}
			if l.Drops != 0 {
				q += fmt.Sprintf(", %d packets dropped", l.Drops)
			}
			fmt.Fprintf(w, "    %-8s %-4s mtu %d  %s  qdisc %s\n", l.Name, state, l.MTU, strings.Join(l.Addrs, " "), q)
		}
		for _, r := range ns.Routes {
			fmt.Fprintf(w, "    route %s\n", r)
		}
		if len(ns.PIDs) > 0 {
			fmt.Fprintf(w, "    processes%s\n", strings.TrimPrefix(pidNote(ns.PIDs), "; ended processes"))
		}
	}
	if s.Config != nil && s.Config.Model != nil {
		printRelayStatus(w, s.Config.Model.Spec, s.Relays)
	}
	printWireStatus(w, s.Config, s.Wire)
	printFillerStatus(w, s.Config, s.Filler)
}

func newLabExecCmd(e *env, name *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec a|b|r -- COMMAND [ARG...]",
		Short: "Run a command inside host a or b (or r, with --model or --wire exact) of the lab; its exit code is wirebench's",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) >= 2 && args[1] == "--" {
				args = append([]string{args[0]}, args[2:]...) // "--" after the host: flags stop at the host, so cobra keeps it
			}
			if len(args) < 2 {
				return usagef("expected a host (a or b) and a command, like: lab exec b -- wirebench server")
			}
			if args[0] != "a" && args[0] != "b" && args[0] != "r" {
				return usagef("unknown host %q: want a or b (or r in a lab with --model or --wire exact)", args[0])
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if err := labctl.Available(); err != nil {
				return err
			}
			argv := args[1:]
			if argv[0] == "--" {
				argv = argv[1:]
			}
			stdio := labctl.ExecIO{Stdin: os.Stdin, Stdout: rawWriter(e.stdout), Stderr: e.stderr}
			if e.signalsTaken != nil {
				stdio.SignalsTaken = func() { e.signalsTaken.Store(true) }
			}
			code, err := labctl.Exec(e.ctx, *name, args[0], argv, stdio)
			if err != nil {
				return err
			}
			if code != 0 {
				return exitStatus{code}
			}
			return nil
		},
	}
	cmd.Flags().SetInterspersed(false) // everything after the host belongs to the command
	return cmd
}

// rawWriter returns the file under wirebench's output wrapper, so that a
// command run by `lab exec` writes to the terminal itself (and sees one).
func rawWriter(w io.Writer) io.Writer {
	if ew, ok := w.(*errWriter); ok {
		if f, ok := ew.w.(*os.File); ok {
			return f
		}
	}
	return w
}
