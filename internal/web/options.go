package web

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/store"
)

// ListenAddr is where a dashboard given as s listens: a port alone, or an
// empty host, means 127.0.0.1.
func ListenAddr(s string) (string, error) {
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

// ProbeWords says to the user where /probe may send tests, as given.
func ProbeWords(allow []string) string {
	if len(allow) == 0 {
		return "none allowed"
	}
	return fmt.Sprintf("allowed to %v", allow)
}

// Options are the web command's flags and argument, as typed.
type Options struct {
	// Addr is ADDR:PORT or a port (ListenAddr).
	Addr string
	// ProbeAllow are the networks /probe may test, CIDR prefixes or
	// addresses.
	ProbeAllow []string
	// DB is the results store's URL ("" for the default).
	DB string
}

// StoreServer is a dashboard over the results store alone, with no test
// server beside it (the web command).
type StoreServer struct {
	opts  Options
	addr  string
	allow []netip.Prefix
}

// StoreServer validates the options and returns the dashboard they ask
// for. Every error is a mistake in them.
func (o Options) StoreServer() (*StoreServer, error) {
	addr, err := ListenAddr(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("invalid address %q: %v", o.Addr, err)
	}
	allow, err := admit.ParseAllow(o.ProbeAllow)
	if err != nil {
		return nil, fmt.Errorf("invalid --probe-allow: %v", err)
	}
	return &StoreServer{opts: o, addr: addr, allow: allow}, nil
}

// Run opens the store (a wrong URL is an error at once rather than on the
// first page), listens and serves until ctx is done; logf prints the
// operational lines.
func (s *StoreServer) Run(ctx context.Context, logf func(format string, args ...any)) error {
	saver := &store.Saver{URL: s.opts.DB}
	st, err := saver.Open(ctx)
	if err != nil {
		return err
	}
	defer saver.Close()
	ws := New(Config{Probe: ProbeConfig{Allow: s.allow}, History: StoreHistory{Open: saver.Open}, OnLog: func(m string) { logf("%s", m) }})
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.addr)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	logf("dashboard of %s on http://%s/ (metrics /metrics, probes /probe: %s)", st.Location(), ln.Addr(), ProbeWords(s.opts.ProbeAllow))
	return ws.ListenAndServe(ctx, ln)
}
