package cli

// `lab up --wire exact`: the hidden command that runs the exact wire's
// forwarder in the lab's middle host r, and how the wire is shown. Starting
// and ending it is labctl's. See docs/lab-hosts.md.

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/edtwire"
	"github.com/wirebench/wirebench/internal/labctl"
	"github.com/wirebench/wirebench/internal/netlab"
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

// printFillerStatus writes the filler's part of `lab status`.
func printFillerStatus(w io.Writer, st *labctl.State, s []netlab.FillStats) {
	if st == nil || st.Filler == nil {
		return
	}
	fmt.Fprintf(w, "  filled wire: filler pid %d, log %s\n", st.Filler.PID, st.Filler.Log)
	if s == nil {
		fmt.Fprintf(w, "    no counters yet (%s)\n", st.Filler.Stats)
	}
	for _, d := range s {
		fmt.Fprintf(w, "    %s\n", d)
	}
}

// printWireStatus writes the exact wire's part of `lab status`.
func printWireStatus(w io.Writer, st *labctl.State, s []edtwire.Stats) {
	if st == nil || st.Wire == nil {
		return
	}
	fmt.Fprintf(w, "  exact wire: forwarder pid %d in r, log %s\n", st.Wire.PID, st.Wire.Log)
	if s == nil {
		fmt.Fprintf(w, "    no counters yet (%s)\n", st.Wire.Stats)
	}
	for _, d := range s {
		fmt.Fprintf(w, "    %s\n", d)
	}
}
