package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/version"
)

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the wirebench version",
		Example: "  wirebench version\n  wirebench -v\n  wirebench --version",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(e.stdout, "wirebench %s\n", version.Long())
			return nil
		},
	}
}
