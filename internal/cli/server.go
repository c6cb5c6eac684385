package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newServerCmd(e *env) *cobra.Command {
	return &cobra.Command{Use: "server HOST", RunE: func(*cobra.Command, []string) error { return errors.New("server: not built yet") }}
}
