package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/session"
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

// attachWeb checks the dashboard flags and, when --web is given, attaches
// a dashboard to cfg, showing hist as its history (nil: the server's own
// results, kept in memory); the returned serve starts serving it (a no-op
// without --web).
func (f *webFlags) attachWeb(e *env, cfg *session.ServerConfig, hist web.History) (serve func() error, err error) {
	none := func() error { return nil }
	if f.addr == "" {
		if len(f.probeAllow) > 0 {
			return nil, usagef("--probe-allow needs --web ADDR:PORT (probes are asked for over HTTP)")
		}
		return none, nil
	}
	addr, err := webAddr(f.addr)
	if err != nil {
		return nil, usagef("invalid --web %q: %v", f.addr, err)
	}
	allow, err := admit.ParseAllow(f.probeAllow)
	if err != nil {
		return nil, usagef("invalid --probe-allow: %v", err)
	}
	ws := web.New(web.Config{Probe: web.ProbeConfig{Allow: allow}, OnLog: cfg.OnLog, History: hist})
	ws.Attach(cfg)
	return func() error {
		var lc net.ListenConfig
		ln, err := lc.Listen(e.ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("dashboard: %w", err)
		}
		e.logf("dashboard on http://%s/ (metrics /metrics, probes /probe: %s)", ln.Addr(), probeWords(f.probeAllow))
		go func(ctx context.Context) {
			if err := ws.ListenAndServe(ctx, ln); err != nil {
				e.logf("%v", err)
			}
		}(e.ctx)
		return nil
	}, nil
}

func probeWords(allow []string) string {
	if len(allow) == 0 {
		return "none allowed"
	}
	return fmt.Sprintf("allowed to %v", allow)
}
