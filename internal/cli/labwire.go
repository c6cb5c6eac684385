package cli

// `lab up --wire exact` and the filled wire: the hidden commands that run
// the exact wire's forwarder in the lab's middle host r and the filled
// wire's filler. Starting and ending them, and showing them, is labctl's.
// See docs/lab-hosts.md.

import (
	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/labctl"
)

// newLabWireRunCmd is the hidden `lab wire-run`: the exact wire's
// forwarder, run by `lab up --wire exact` inside r.
func newLabWireRunCmd(e *env) *cobra.Command {
	var cfgPath, statsPath string
	cmd := &cobra.Command{
		Use:    "wire-run",
		Short:  "Run the exact wire's forwarder in the current namespace (started by lab up --wire exact)",
		Hidden: true,
		Args:   exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			return labctl.RunWire(e.ctx, cfgPath, statsPath, e.stderr)
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "the forwarder's configuration (JSON)")
	cmd.Flags().StringVar(&statsPath, "stats", "", "file its counters are written to every second")
	return cmd
}

// newLabFillRunCmd is the hidden `lab fill-run`: the filled wire's
// filler, run by `lab up` in the lab.
func newLabFillRunCmd(e *env) *cobra.Command {
	var cfgPath, statsPath string
	cmd := &cobra.Command{
		Use:    "fill-run",
		Short:  "Run the filled wire's filler (started by lab up)",
		Hidden: true,
		Args:   exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			return labctl.RunFiller(e.ctx, cfgPath, statsPath, e.stderr)
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "the filler's links (JSON)")
	cmd.Flags().StringVar(&statsPath, "stats", "", "file its counters are written to every second")
	return cmd
}
