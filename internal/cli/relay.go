package cli

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
)

// modelHelp is the model syntax in brief, shared by reflect and relay.
const modelHelp = `The model (--model) is a comma-separated list of key=value (docs/lab.md):
  loss=1%  burst=GOOD/BAD/LOSS  reorder=0.5%  dup=0.1%  corrupt=0.01%
  delay=20ms  jitter=2ms  seed=N
  rate=100mbit  overhead=ethernet|usb-eem|…|N  queue=SIZE|TIME
  service=N  buffer=B  per-buffer=K  tick=1ms/7  max=3000`

// labFlags are the flags reflect and relay share.
type labFlags struct {
	model    string
	json     bool
	duration time.Duration
}

func (f *labFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "device model SPEC (see above)")
	fl.BoolVar(&f.json, "json", false, "print the closing counts as one JSON document (docs/lab.md)")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (default: until SIGINT/SIGTERM)")
}

// parse checks the shared flags and returns the model.
func (f *labFlags) parse() (model.Spec, error) {
	spec, err := model.Parse(f.model)
	if err != nil {
		return spec, usageError{err}
	}
	if f.duration < 0 {
		return spec, usagef("invalid --duration %v", f.duration)
	}
	return spec, nil
}

// runCtx is the command's context, bounded by --duration; made once the
// socket is bound, so that the report's duration (from then) is never
// shorter than asked.
func (f *labFlags) runCtx(e *env) (context.Context, context.CancelFunc) {
	if f.duration > 0 {
		return context.WithTimeout(e.ctx, f.duration)
	}
	return context.WithCancel(e.ctx)
}

func (f *labFlags) print(e *env, rep lab.Report) error {
	if f.json {
		return writeJSONDoc(e.stdout, rep)
	}
	rep.WriteText(e.stdout)
	return nil
}

func newReflectCmd(e *env) *cobra.Command {
	f := &labFlags{}
	var port int
	var bind string
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
			spec, err := f.parse()
			if err != nil {
				return err
			}
			if port < 0 || port > 65535 {
				return usagef("invalid port %d", port)
			}
			r, err := lab.NewReflector(e.ctx, net.JoinHostPort(bind, strconv.Itoa(port)), spec, f.model)
			if err != nil {
				return err
			}
			// --duration counts from when it listens, as its report does.
			ctx, cancel := f.runCtx(e)
			defer cancel()
			e.logf("reflecting on %s (model %q, seed %d)", r.Addr(), f.model, r.Seed())
			rep, err := r.Run(ctx)
			if perr := f.print(e, rep); perr != nil {
				return perr
			}
			return err
		},
	}
	cmd.Flags().IntVarP(&port, "port", "p", 5001, "UDP port to listen on")
	cmd.Flags().StringVarP(&bind, "bind", "B", "", "address to listen on (default: all)")
	f.add(cmd)
	return cmd
}

func newRelayCmd(e *env) *cobra.Command {
	f := &labFlags{}
	var listen, to string
	var both, tcp bool
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
			spec, err := f.parse()
			if err != nil {
				return err
			}
			if listen == "" || to == "" {
				return usagef("relay needs --listen ADDR:PORT and --to HOST:PORT")
			}
			for _, a := range []string{listen, to} {
				if _, _, err := net.SplitHostPort(a); err != nil {
					return usagef("invalid address %q: want HOST:PORT", a)
				}
			}
			r, err := lab.NewRelay(e.ctx, lab.RelayConfig{Listen: listen, To: to, Model: spec, ModelText: f.model, Both: both, TCP: tcp,
				OnLog: func(s string) { e.logf("%s", s) }})
			if err != nil {
				return err
			}
			ctx, cancel := f.runCtx(e) // --duration from when it listens, as its report
			defer cancel()
			e.logf("relaying %s -> %s (model %q, seed %d)", r.Addr(), to, f.model, r.Seed())
			rep, err := r.Run(ctx)
			if perr := f.print(e, rep); perr != nil {
				return perr
			}
			return err
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "ADDR:PORT to receive client datagrams on")
	cmd.Flags().StringVar(&to, "to", "", "HOST:PORT of the target")
	cmd.Flags().BoolVar(&both, "both", false, "apply the model to the replies (target -> client) too")
	cmd.Flags().BoolVar(&tcp, "tcp", false, "also proxy TCP connections on the same port, with the model's delay and rate")
	f.add(cmd)
	return cmd
}
