package cli

import (
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/labctl"
	"github.com/wirebench/wirebench/internal/netlab"
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

func newLabUpCmd(e *env, name *string) *cobra.Command {
	var f labctl.UpOptions
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Create the lab (first removing what a crashed run left behind)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			f.ModelSet = c.Flags().Changed("model")
			if !c.Flags().Changed("model-port") {
				f.ModelPorts = nil
			}
			cfg, err := f.UpConfig(*name)
			if err != nil {
				return usageError{err}
			}
			if err := labctl.Available(); err != nil {
				return err
			}
			cfg.Self, cfg.Leftovers = selfArgv, labctl.WriteLeftovers(e.stderr, cfg.Lab.Lab)
			st, err := labctl.Up(e.ctx, cfg)
			if err != nil {
				return err
			}
			labctl.WriteUp(e.stdout, st)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Model, "model", "", "put host r between a and b running wirebench relay with device model `SPEC` (docs/lab.md); a reaches b only through it")
	fl.IntSliceVar(&f.ModelPorts, "model-port", labctl.DefaultModelPorts, "UDP (and TCP) ports the relay listens on, one relay each")
	fl.BoolVar(&f.ModelBoth, "model-both", false, "apply the model to b -> a as well")
	fl.StringVar(&f.Net, "net", netlab.DefaultNet.String(), "IPv4 network inside 198.18.0.0/15 (at most a /30): a gets its .1, b its .2")
	fl.StringVar(&f.Medium, "medium", "", "shape both directions as Ethernet medium `NAME` (eth10, eth100, eth1g, ...)")
	fl.StringVar(&f.Rate, "rate", "", "shape both directions as an Ethernet wire of this rate (e.g. 100mbit)")
	fl.IntVar(&f.MTU, "mtu", netlab.DefaultMTU, "MTU of the veth pair")
	fl.StringVar(&f.Wire, "wire", "filled", "how the wire is emulated: filled (a token bucket emptied while the wire idles: exact rates on a busy machine, and a burst after idle leaves at the wire's rate), tbf (the bucket alone: bursts after idle leave at veth speed) or exact (an experimental departure-time forwarder in host r); docs/lab-hosts.md")
	fl.IntVar(&f.Burst, "burst", 0, "the shaper's bucket in `BYTES` (default 1 ms of the rate, which absorbs late timers on a busy machine; with --wire tbf that much leaves at veth speed after idle; docs/lab-hosts.md)")
	return cmd
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
			return writeLabDoc(e, asJSON, d, err)
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
			return writeLabDoc(e, asJSON, s, err)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func newLabExecCmd(e *env, name *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec a|b|r -- COMMAND [ARG...]",
		Short: "Run a command inside host a or b (or r, with --model or --wire exact) of the lab; its exit code is wirebench's",
		Args: func(_ *cobra.Command, args []string) error {
			_, _, err := labctl.ExecArgs(args)
			return usage(err)
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if err := labctl.Available(); err != nil {
				return err
			}
			host, argv, _ := labctl.ExecArgs(args)
			stdio := labctl.ExecIO{Stdin: os.Stdin, Stdout: rawWriter(e.stdout), Stderr: e.stderr}
			if e.signalsTaken != nil {
				stdio.SignalsTaken = func() { e.signalsTaken.Store(true) }
			}
			code, err := labctl.Exec(e.ctx, *name, host, argv, stdio)
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

// writeLabDoc prints doc (read with err) as JSON or as text.
func writeLabDoc(e *env, asJSON bool, doc interface{ WriteText(io.Writer) }, err error) error {
	switch {
	case err != nil:
		return err
	case asJSON:
		return writeJSONDoc(e.stdout, doc)
	}
	doc.WriteText(e.stdout)
	return nil
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
