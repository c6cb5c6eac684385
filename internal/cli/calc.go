package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newCalcCmd is being written; it is replaced by the real command.
func newCalcCmd(e *env) *cobra.Command {
	return &cobra.Command{Use: "calc", Hidden: true, RunE: func(*cobra.Command, []string) error { return errors.New("calc: not built yet") }}
}
