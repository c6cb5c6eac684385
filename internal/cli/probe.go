package cli

import (
	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/report"
)

// probeFlags are the probe command's flags as typed.
type probeFlags struct {
	probe.Config
	json bool
}

func newProbeCmd(e *env) *cobra.Command {
	f := &probeFlags{}
	cmd := &cobra.Command{
		Use:   "probe HOST",
		Short: "Check which iperf dialects a peer answers (iperf2 TCP/UDP, modern or legacy, iperf3, wirebench)",
		Long: `Run a few short, bounded exchanges against one port and report which dialects
answer: iperf 2.1+ TCP (its CLIENTHDRACK carries the version), a TCP sink with
no ack (iperf 2.0.x, lwiperf, zperf, ESP-IDF), iperf2 UDP with the modern or
legacy server report layout, iperf3 (a complete 1 KiB test, so the server
ends cleanly; iperf3 does not send its version), and wirebench (echo service).
It also checks iperf2 reverse (-R) and connect-back (-d) when the peer acks.
Each step waits at most --timeout for a reply; the whole probe takes under
10 s. Nothing answering is a normal result (exit 0), not an error.
The JSON document has the schema wirebench/1, kind "probe" (docs/probe.md).`,
		Example: `  wirebench probe 192.0.2.1
  wirebench probe 192.0.2.1 -p 5201 --json`,
		Args: exactArgs(1, "one HOST"),
		RunE: func(cmd *cobra.Command, args []string) error { return runProbe(e, args[0], f) },
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.Port, "port", "p", probe.DefaultPort, "port to probe (TCP and UDP)")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (schema wirebench/1, kind probe)")
	fl.DurationVar(&f.Timeout, "timeout", probe.DefaultTimeout, "how long each step waits for a reply (up to 2s)")
	return cmd
}

func runProbe(e *env, host string, f *probeFlags) error {
	if err := f.Check(); err != nil {
		return usageError{err}
	}
	f.Host = host
	res, err := probe.Run(e.ctx, f.Config)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSONDoc(e.stdout, res)
	}
	return report.WriteProbe(e.stdout, res)
}
