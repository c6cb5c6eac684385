package cli

import (
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/selftest"
	"github.com/wirebench/wirebench/internal/units"
)

// newLoopbackCmd is the no-configuration first run: a server and a client
// in one process on 127.0.0.1, measuring this machine's own stack.
func newLoopbackCmd(e *env) *cobra.Command {
	var o selftest.Options
	var json bool
	cmd := &cobra.Command{
		Use:   "loopback",
		Short: "Measure TCP and UDP over 127.0.0.1 with a server and a client in this one process",
		Long: `Run a wirebench server and client in one process over the loopback interface:
a TCP test, then a UDP test at the given rate. It needs no second machine and no
configuration, and shows what this host itself can generate and count — the
ceiling of any measurement made from it.`,
		Example: `  wirebench loopback
  wirebench loopback -t 5 -b 1G
  wirebench loopback --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			d, r, err := o.Check()
			if err != nil {
				return usageError{err}
			}
			return runLoopback(e, d, r, json)
		},
	}
	cmd.Flags().Float64VarP(&o.Seconds, "time", "t", 2, "seconds per test")
	cmd.Flags().StringVarP(&o.Rate, "bandwidth", "b", "100M", "UDP rate (bit/s with k/M/G, or pps)")
	cmd.Flags().BoolVar(&json, "json", false, `print one JSON document (kind "loopback") with both client results`)
	return cmd
}

func runLoopback(e *env, d time.Duration, rate units.Rate, json bool) error {
	var text io.Writer
	if !json {
		text = e.stdout
	}
	doc, failed := selftest.Run(e.ctx, d, rate, text, e.logf)
	if json {
		if err := doc.WriteJSON(e.stdout); err != nil {
			return errors.Join(failed, err)
		}
	}
	return failed
}
