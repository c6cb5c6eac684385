package cli

// `lab up --wire exact`: the hidden command that runs the exact wire's
// forwarder in the lab's middle host r, and how the wire is shown. Starting
// and ending it is labctl's. See docs/lab-hosts.md.

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
