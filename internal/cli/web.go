package cli

import (
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/serve"
	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/web"
)

// webFlags are the server's dashboard flags (docs/web.md).
type webFlags struct {
	addr       string
	probeAllow []string
}

func (f *webFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "web", "", "serve the dashboard, /api, /metrics and /probe over HTTP on ADDR:PORT; a port alone (8080 or :8080) listens on 127.0.0.1 only (docs/web.md)")
	fl.StringSliceVar(&f.probeAllow, "probe-allow", nil, "let /probe test targets in these networks: CIDR prefixes or addresses, repeatable and comma-separated (default: none; needs --web)")
}

// webAddr is where the dashboard listens: a port alone, or an empty host,
// means 127.0.0.1.
func webAddr(s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil {
		s = ":" + strconv.Itoa(n)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("want ADDR:PORT or a port: %w", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("invalid port %q", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// resolve checks the dashboard flags: nil without --web.
func (f *webFlags) resolve() (*serve.Web, error) {
	if f.addr == "" {
		if len(f.probeAllow) > 0 {
			return nil, usagef("--probe-allow needs --web ADDR:PORT (probes are asked for over HTTP)")
		}
		return nil, nil
	}
	addr, err := webAddr(f.addr)
	if err != nil {
		return nil, usagef("invalid --web %q: %v", f.addr, err)
	}
	allow, err := admit.ParseAllow(f.probeAllow)
	if err != nil {
		return nil, usagef("invalid --probe-allow: %v", err)
	}
	return &serve.Web{Addr: addr, ProbeAllow: allow, ProbeWords: probeWords(f.probeAllow)}, nil
}

func probeWords(allow []string) string {
	if len(allow) == 0 {
		return "none allowed"
	}
	return fmt.Sprintf("allowed to %v", allow)
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
	addr, err := webAddr(arg)
	if err != nil {
		return usagef("invalid address %q: %v", arg, err)
	}
	allow, err := admit.ParseAllow(f.probeAllow)
	if err != nil {
		return usagef("invalid --probe-allow: %v", err)
	}
	// The store is opened now, so that a wrong --db is an error at once
	// rather than on the first page.
	saver := &store.Saver{URL: f.db}
	st, err := saver.Open(e.ctx)
	if err != nil {
		return err
	}
	defer saver.Close()
	ws := web.New(web.Config{Probe: web.ProbeConfig{Allow: allow}, History: web.StoreHistory{Open: saver.Open}, OnLog: func(m string) { e.logf("%s", m) }})
	var lc net.ListenConfig
	ln, err := lc.Listen(e.ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	e.logf("dashboard of %s on http://%s/ (metrics /metrics, probes /probe: %s)", st.Location(), ln.Addr(), probeWords(f.probeAllow))
	return ws.ListenAndServe(e.ctx, ln)
}
