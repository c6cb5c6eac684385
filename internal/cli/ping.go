package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newPingCmd is being written; it is replaced by the real command.
func newPingCmd(e *env) *cobra.Command {
	return &cobra.Command{Use: "ping", Hidden: true, RunE: func(*cobra.Command, []string) error { return errors.New("ping: not built yet") }}
}
