package cli

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/lab"
)

// modelHelp is the model syntax in brief, shared by reflect and relay.
const modelHelp = `The model (--model) is a comma-separated list of key=value (docs/lab.md):
  loss=1%  burst=GOOD/BAD/LOSS  reorder=0.5%  dup=0.1%  corrupt=0.01%
  delay=20ms  jitter=2ms  seed=N
  rate=100mbit  overhead=ethernet|usb-eem|…|N  queue=SIZE|TIME
  service=N  buffer=B  per-buffer=K  tick=1ms/7  max=3000`

// registerLab adds the flags reflect and relay share.
func registerLab(cmd *cobra.Command, o *lab.Options, asJSON *bool) {
	fl := cmd.Flags()
	fl.StringVar(&o.Model, "model", "", "device model SPEC (see above)")
	fl.BoolVar(asJSON, "json", false, "print the closing counts as one JSON document (docs/lab.md)")
	fl.DurationVar(&o.Duration, "duration", 0, "stop after this long (default: until SIGINT/SIGTERM)")
}

// runModelled runs a reflector or a relay, bound already, for --duration,
// counted from now as its report is, and prints its report.
func runModelled(e *env, o lab.Options, asJSON bool, run func(context.Context) (lab.Report, error)) error {
	ctx, cancel := o.RunContext(e.ctx)
	defer cancel()
	rep, err := run(ctx)
	var perr error
	if asJSON {
		perr = writeJSONDoc(e.stdout, rep)
	} else {
		rep.WriteText(e.stdout)
	}
	if perr != nil {
		return perr
	}
	return err
}

func newReflectCmd(e *env) *cobra.Command {
	var o lab.ReflectOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "reflect [-p PORT] [-B ADDR] [--model SPEC] [--json]",
		Short: "UDP reflector: send every datagram back to its sender, through an optional device model",
		Long: `reflect sends every UDP datagram it receives back to its sender, unchanged
unless the model says otherwise: the far end for loopback-style tests, like a
modem in internal loopback. It stops on SIGINT/SIGTERM or after --duration and
prints what it received, reflected and dropped.

` + modelHelp,
		Example: `  wirebench reflect -p 5001
  wirebench reflect -p 5001 --model service=5000,buffer=2524 --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			addr, spec, err := o.Config()
			if err != nil {
				return usageError{err}
			}
			r, err := lab.NewReflector(e.ctx, addr, spec, o.Model)
			if err != nil {
				return err
			}
			e.logf("reflecting on %s (model %q, seed %d)", r.Addr(), o.Model, r.Seed())
			return runModelled(e, o.Options, asJSON, r.Run)
		},
	}
	cmd.Flags().IntVarP(&o.Port, "port", "p", 5001, "UDP port to listen on")
	cmd.Flags().StringVarP(&o.Bind, "bind", "B", "", "address to listen on (default: all)")
	registerLab(cmd, &o.Options, &asJSON)
	return cmd
}

func newRelayCmd(e *env) *cobra.Command {
	var o lab.RelayOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "relay --listen ADDR:PORT --to HOST:PORT [--model SPEC] [--both] [--tcp] [--json]",
		Short: "User-space UDP relay that applies a device model on the way (loss, delay, rate, device limits)",
		Long: `relay forwards UDP datagrams from clients to a target and the replies back,
applying a device model to the forward direction (client -> target; --both for
the replies too). Every client source address gets its own upstream socket, so
replies find their way back and several tests can cross it at once. It stops on
SIGINT/SIGTERM or after --duration and prints what it did; "data" counts only
iperf2 data datagrams (id above 0) and each test's FIN as the receiver counts it
(datagram |id|: the FINs up to the first one let through), to check a test's own
sent, loss, out-of-order and duplicate counts against exactly. --tcp also proxies TCP connections on the same
port, with the model's delay and rate.

` + modelHelp,
		Example: `  wirebench relay --listen 127.0.0.1:6001 --to 127.0.0.1:5001 --model loss=1%,reorder=0.5%,seed=7
  wirebench relay --listen :6001 --to 127.0.0.1:5001 --model service=5000,buffer=2524 --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			cfg, err := o.Config()
			if err != nil {
				return usageError{err}
			}
			cfg.OnLog = func(s string) { e.logf("%s", s) }
			r, err := lab.NewRelay(e.ctx, cfg)
			if err != nil {
				return err
			}
			e.logf("relaying %s -> %s (model %q, seed %d)", r.Addr(), o.To, o.Model, r.Seed())
			return runModelled(e, o.Options, asJSON, r.Run)
		},
	}
	cmd.Flags().StringVar(&o.Listen, "listen", "", "ADDR:PORT to receive client datagrams on")
	cmd.Flags().StringVar(&o.To, "to", "", "HOST:PORT of the target")
	cmd.Flags().BoolVar(&o.Both, "both", false, "apply the model to the replies (target -> client) too")
	cmd.Flags().BoolVar(&o.TCP, "tcp", false, "also proxy TCP connections on the same port, with the model's delay and rate")
	registerLab(cmd, &o.Options, &asJSON)
	return cmd
}
