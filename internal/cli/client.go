package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newClientCmd(e *env) *cobra.Command {
	return &cobra.Command{Use: "client HOST", RunE: func(*cobra.Command, []string) error { return errors.New("client: not built yet") }}
}
