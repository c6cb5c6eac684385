// Package serve runs wirebench's server: it listens for tests in every
// dialect (session), answers echo tests beside them, saves each test as it
// ends and prints it, and serves the dashboard when asked. The cli turns
// the `server` command's flags into a Config; this package measures
// nothing itself and parses no flags.
package serve

import (
	"context"
	"errors"
	"fmt"
	"github.com/wirebench/wirebench/internal/priority"
	"net"
	"net/netip"
	"slices"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/session/iperf3"
	"github.com/wirebench/wirebench/internal/web"
)

// Config is one server's run.
type Config struct {
	// Server is the session server's configuration; Run sets its hooks.
	Server session.ServerConfig
	// Iperf3 is the iperf3 port's; its Port is left 0 when it is the
	// server's own port (iperf3 is recognised there anyway).
	Iperf3 iperf3.Config
	// AuthNote, when not "", is logged once the server listens: how iperf3
	// clients authenticate.
	AuthNote string
	// Printer prints the tests.
	Printer *Printer
	// Output is the Printer's output (JSON documents carry the saved
	// run's id and the store's warnings; CSV only the warnings).
	Output Output
	// Apply adds what the server knows besides the measurement (the
	// link's line rate) to each result before it is saved; nil: nothing.
	Apply func(*result.Result)
	// Save keeps a test's result, returning the saved run's id or a
	// warning (store.Saver.Save); nil: results are not saved.
	Save func(r *result.Result) (id int64, warning string)
	// KeepRaw saves every header-less test; without it one that does not
	// look like a test (LooksLikeTest) is printed and counted, not saved.
	KeepRaw bool
	// Web, when not nil, serves the dashboard beside the tests.
	Web *Web
	// Logf prints an operational line on stderr.
	Logf func(format string, args ...any)
}

// Web is the dashboard's part of a server's run.
type Web struct {
	// Addr is where it listens (host:port).
	Addr string
	// ProbeAllow is where /probe may send tests; ProbeWords says it to
	// the user.
	ProbeAllow []netip.Prefix
	ProbeWords string
	// History is its history; nil keeps the server's results in memory.
	History web.History
}

// Run serves until ctx is done (or the first test ends with OneShot), and
// returns once every test has ended and been saved and printed.
func Run(ctx context.Context, c Config) error {
	cfg := c.Server
	c.Printer.Hook(&cfg)
	c.Printer.logf = c.Logf
	// Last, once every test has been saved and printed (stop, below).
	defer c.Printer.Close()
	// The dashboard, when asked for: set before any test can end (and be
	// saved), so the save worker below reads it only after.
	var ws *web.Server
	var serveWeb func() error
	if c.Apply == nil {
		c.Apply = func(*result.Result) {}
	}
	if c.Save == nil {
		cfg.OnResult = func(id int, r *result.Result) {
			c.Apply(r)
			c.Printer.Print(id, r)
		}
	} else {
		stop := saveAndPrint(&cfg, c, func(id int, run int64, w string) {
			if ws != nil {
				ws.Saved(id, run, w) // the live page links the test to its run
			}
		})
		// Serve returns once every test has ended: the last results
		// are saved and printed before Run returns.
		defer stop()
	}
	if c.Web != nil && cfg.Interval == 0 {
		// The live charts need intervals: take them each second,
		// printing none as asked (docs/web.md).
		cfg.Interval = time.Second
		cfg.OnInterval, cfg.OnGroupInterval = nil, nil
	}
	// Every thread of the process, before the server makes more: its one
	// UDP reader must keep its share of a busy host (docs/server.md).
	cfg.Priority = priority.Raise(cfg.Nice)
	// What peers ask it to send stays in the normal class: many tests at
	// once must not each hold a real-time thread.
	priority.KeepSendersNormal("a server's senders run at the server's priority (--nice)")
	ecfg := echo.ServerConfig{IdleTimeout: cfg.IdleTimeout, OnLog: cfg.OnLog}
	ws, serveWeb = attachWeb(ctx, c, &cfg, &ecfg)
	srv, err := iperf2.Listen(ctx, cfg)
	if err != nil {
		return err
	}
	if err := serveWeb(); err != nil {
		return err
	}
	echo.Register(srv, ecfg)
	i3 := c.Iperf3
	if c.AuthNote != "" {
		c.Logf("%s", c.AuthNote)
	}
	if i3.Port == srv.Port() {
		i3.Port = 0 // iperf3 is recognised on the main port anyway
	}
	i3port, err := iperf3.Enable(ctx, srv, i3)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w (is an iperf3 server running? --iperf3-port 0 answers iperf3 clients on port %d only, or pick another port)", err, srv.Port())
		}
		return err
	}
	if i3port != 0 {
		c.Logf("iperf3 clients also on TCP and UDP port %d", i3port)
	}
	c.Printer.Listening(cfg.Bind, srv.Port(), c.Logf)
	return srv.Serve(ctx)
}

// saveAndPrint sets cfg.OnResult to hand each ended test to one worker
// that saves it, then prints it: never on the goroutine that ended it (for
// UDP the one reader of every test, which must go on answering FINs). A
// store that fails says so once (until a save works again) and in every
// JSON or CSV document it could not keep; a store slower than the tests
// end only makes the line longer: no test is left unsaved for it. The
// returned stop waits for the line to empty.
func saveAndPrint(cfg *session.ServerConfig, c Config, saved func(id int, run int64, warning string)) (stop func()) {
	var queue line[endedTest]
	var noise noiseCount
	done := make(chan struct{})
	go func() {
		defer close(done)
		for t := range queue.all() {
			r := t.r
			if !c.KeepRaw && !LooksLikeTest(r) {
				noise.skipped(c.Logf)
				saved(t.id, 0, "not saved: a header-less test that did not look like a test (--keep-raw saves it)")
				c.Printer.Print(t.id, r)
				continue
			}
			id, w := c.Save(r)
			saved(t.id, id, w)
			if (w != "" || id > 0) && c.Output == JSON || w != "" && c.Output == CSV {
				// A copy: others (the dashboard) may be reading t.r now.
				cp := *r
				if w != "" {
					cp.Warnings = append(slices.Clip(r.Warnings), w)
				}
				if c.Output == JSON {
					cp.RunID = id
				}
				r = &cp
			}
			c.Printer.Print(t.id, r)
		}
	}()
	cfg.OnResult = func(id int, r *result.Result) {
		c.Apply(r)
		queue.push(endedTest{id, r})
	}
	return func() { queue.close(); <-done }
}

// endedTest is a server test waiting to be saved and printed.
type endedTest struct {
	id int
	r  *result.Result
}

// attachWeb attaches the dashboard (c.Web) to cfg and its echo tests'
// metrics to ecfg and returns it (nil without one) and a func that starts
// serving it (a no-op without a dashboard).
func attachWeb(ctx context.Context, c Config, cfg *session.ServerConfig, ecfg *echo.ServerConfig) (*web.Server, func() error) {
	if c.Web == nil {
		return nil, func() error { return nil }
	}
	ws := web.New(web.Config{Probe: web.ProbeConfig{Allow: c.Web.ProbeAllow}, OnLog: cfg.OnLog, History: c.Web.History})
	ws.Attach(cfg)
	ecfg.OnSession = ws.EchoFinished
	return ws, func() error {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", c.Web.Addr)
		if err != nil {
			return fmt.Errorf("dashboard: %w", err)
		}
		c.Logf("dashboard on http://%s/ (metrics /metrics, probes /probe: %s)", ln.Addr(), c.Web.ProbeWords)
		go func() {
			if err := ws.ListenAndServe(ctx, ln); err != nil {
				c.Logf("%v", err)
			}
		}()
		return nil
	}
}
