package cli

import (
	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/serve"
	"github.com/wirebench/wirebench/internal/web"
)

// webFlags are the server's dashboard flags (docs/web.md).
type webFlags struct{ serve.WebOptions }

func (f *webFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.Addr, "web", "", "serve the dashboard, /api, /metrics and /probe over HTTP on ADDR:PORT; a port alone (8080 or :8080) listens on 127.0.0.1 only (docs/web.md)")
	fl.StringSliceVar(&f.ProbeAllow, "probe-allow", nil, "let /probe test targets in these networks: CIDR prefixes or addresses, repeatable and comma-separated (default: none; needs --web)")
}

// webAddr is where the dashboard listens (web.ListenAddr).
func webAddr(s string) (string, error) { return web.ListenAddr(s) }

// resolve checks the dashboard flags: nil without --web.
func (f *webFlags) resolve() (*serve.Web, error) {
	w, err := f.Web()
	if err != nil {
		return nil, usageError{err}
	}
	return w, nil
}

// webCmdFlags are the web command's flags.
type webCmdFlags struct {
	dbFlag
	probeAllow []string
}

func newWebCmd(e *env) *cobra.Command {
	f := &webCmdFlags{}
	cmd := &cobra.Command{
		Use:   "web [ADDR:PORT]",
		Short: "Serve the dashboard over the results store alone (no test server)",
		Long: `Serve the dashboard, its JSON API, /metrics and /probe over the runs saved in
the results store (--db, $WIREBENCH_DB, or the default file): the history
filtered by label and each run's page. No test server runs, so nothing is live
unless a /probe is asked for. A port alone (8080 or :8080, the default 8080)
listens on 127.0.0.1 only. Runs until interrupted (docs/web.md).`,
		Example: `  wirebench web                                   # http://127.0.0.1:8080/
  wirebench web 0.0.0.0:9000 --db postgres://lab@db.lab/wirebench
  wirebench web 8080 --probe-allow 198.18.0.0/15`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("give at most one ADDR:PORT")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			addr := "8080"
			if len(args) == 1 {
				addr = args[0]
			}
			return runWeb(e, addr, f)
		},
	}
	cmd.Flags().StringSliceVar(&f.probeAllow, "probe-allow", nil, "let /probe test targets in these networks: CIDR prefixes or addresses, repeatable and comma-separated (default: none)")
	f.dbFlag.register(cmd)
	return cmd
}

func runWeb(e *env, arg string, f *webCmdFlags) error {
	ws, err := web.Options{Addr: arg, ProbeAllow: f.probeAllow, DB: f.db}.StoreServer()
	if err != nil {
		return usageError{err}
	}
	return ws.Run(e.ctx, e.logf)
}
