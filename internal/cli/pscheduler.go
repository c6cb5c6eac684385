package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wirebench/wirebench/internal/pscheduler"
)

func newPSchedulerCmd(e *env) *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "pscheduler METHOD",
		Short: "Act as a perfSONAR pScheduler tool plugin (throughput and rtt tests)",
		Long: `pscheduler answers one pScheduler tool method, reading its JSON input on
standard input and writing its JSON output on standard output, so that
pScheduler can schedule wirebench throughput and rtt tests and archive their
results. Methods: ` + strings.Join(pscheduler.Methods, ", ") + `.

The plugin's executables (contrib/pscheduler-tool-wirebench) call this. Devices
that run no pScheduler (single-ended tests) get their iperf dialect and port
from the configuration file (--config); see docs/pscheduler.md.`,
		Example: `  wirebench pscheduler enumerate
  echo '{"type":"rtt","spec":{"dest":"127.0.0.1","count":3}}' | wirebench pscheduler duration
  echo '{"type":"throughput","spec":{"dest":"198.18.0.7","single-ended":true,"udp":true}}' \
    | wirebench pscheduler can-run --config /etc/pscheduler/tool/wirebench.conf`,
		Args: exactArgs(1, "one METHOD"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(pscheduler.Methods, args[0]) {
				return usagef("unknown method %q: want one of %s", args[0], strings.Join(pscheduler.Methods, ", "))
			}
			cfg, err := pscheduler.LoadConfig(config)
			if err != nil {
				return err
			}
			return pscheduler.Invoke(e.ctx, args[0], cmd.InOrStdin(), e.stdout, cfg)
		},
	}
	cmd.Flags().StringVar(&config, "config", pscheduler.DefaultConfigPath, "the tool's configuration file (JSON; absent = defaults)")
	return cmd
}
