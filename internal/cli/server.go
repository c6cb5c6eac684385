package cli

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/web"
)

type serverFlags struct {
	port        int
	bind        string
	oneShot     bool
	interval    float64
	idle        float64
	maxTests    int
	maxDuration float64
	iperf3Port  int
	maxRate     string
	json, csv   bool
	// per-source safety (docs/server.md)
	allowReverse    []string
	denyReverse     []string
	maxPerSource    int
	maxNewPerSecond float64
	auth            serverAuthFlags
	sockFlags
	offloadFlags
	enhanced bool // iperf2 -e
	linkFlags
	saving saveFlags
	webFlags
	udp bool // -u: nothing, except that a --dut device sends UDP
	dut dutFlags
}

func newServerCmd(e *env) *cobra.Command {
	f := &serverFlags{}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Answer iperf2 and iperf3 tests (TCP and UDP, every dialect) from any number of clients",
		Long: `Listen for tests on one port, TCP and UDP. Each test is answered in its
client's own dialect: iperf 2.1 (16-byte UDP header, report at offset 16),
iperf 2.0.5 and old zperf (12-byte header, report at offset 12), and
header-less clients (zperf TCP, ESP-IDF). Clients that never send a FIN
(ESP-IDF) end after --idle-timeout. Legacy -r/-d connect back only to the
address the test came from; UDP reverse and connect-back tests go only to
sources on loopback, private, CGNAT, benchmarking (198.18.0.0/15, where
"wirebench lab up" puts its hosts), link-local or ULA networks, or those
allowed with --allow-reverse, and never to those in --deny-reverse
(docs/server.md).`,
		Example: `  wirebench server
  wirebench -s -u -i 1
  wirebench server -p 5002 --json > results.jsonl
  wirebench server --web 8080                  # dashboard on http://127.0.0.1:8080/
  wirebench server --web 0.0.0.0:8080 --probe-allow 198.18.0.0/15 --medium eth100
  wirebench server --label site=lab2     # every test saved with this label (docs/store.md)
  wirebench server -u --dut telnet:192.0.2.1:23 --dut-shell esp-idf --dut-time 10 --dut-rate 20M`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error { return runServer(e, cmd, f) },
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.port, "port", "p", session.DefaultPort, "TCP and UDP port to listen on")
	fl.StringVarP(&f.bind, "bind", "B", "", "local address to listen on (default all)")
	fl.BoolVarP(&f.oneShot, "one-off", "1", false, "exit after the first test")
	fl.Float64VarP(&f.interval, "interval", "i", 0, "seconds between interval reports (0 = none)")
	fl.Float64Var(&f.idle, "idle-timeout", 5, "seconds of silence that end a UDP test without FIN or a silent TCP connection")
	fl.IntVar(&f.maxTests, "max-tests", 1024, "most tests open at once")
	fl.Float64Var(&f.maxDuration, "max-duration", 3600, "longest this server sends in a reverse or connect-back test, in seconds; iperf3 clients asking for more are refused")
	fl.IntVar(&f.iperf3Port, "iperf3-port", session.DefaultIperf3Port, "also answer iperf3 clients on this port (0 = only on the main port, where they are recognised too)")
	fl.StringVar(&f.maxRate, "max-rate", "", "refuse iperf3 tests asking for (or measured at) more than this total rate, and send no faster than this in iperf2 UDP -R/-r/-d tests; bit/s with k/M/G")
	fl.StringSliceVar(&f.allowReverse, "allow-reverse", nil, "also send UDP reverse and connect-back tests to these sources: CIDR prefixes or addresses, repeatable and comma-separated; \"any\" allows every source (default: only loopback, private, CGNAT, benchmarking 198.18.0.0/15, link-local and ULA sources)")
	fl.StringSliceVar(&f.denyReverse, "deny-reverse", nil, "never send UDP reverse and connect-back tests to these sources, even on the default networks or in --allow-reverse: CIDR prefixes or addresses, like --allow-reverse")
	fl.IntVar(&f.maxPerSource, "max-tests-per-source", admit.DefaultMaxActive, "most tests one source address may have open at once (0 = no limit)")
	fl.Float64Var(&f.maxNewPerSecond, "max-new-tests-per-second-per-source", admit.DefaultPerSecond, "most new tests one source address may open per second, after a burst of --max-tests-per-source (0 = no limit)")
	fl.BoolVar(&f.json, "json", false, "print one JSON document per test, one per line (JSON Lines, schema wirebench/1)")
	fl.BoolVar(&f.csv, "csv", false, "print each test's intervals and summary as CSV")
	fl.BoolVarP(&f.enhanced, "enhanced", "e", false, "enhanced text output (iperf2 -e): a TCP sender's retransmits, congestion window, RTT and MSS")
	// iperf muscle memory: -u is accepted and means nothing (both are served).
	fl.BoolVarP(&f.udp, "udp", "u", false, "accepted for iperf compatibility: TCP and UDP are always served (with --dut: the device sends UDP)")
	f.auth.register(cmd)
	f.sockFlags.register(cmd)
	f.offloadFlags.register(cmd)
	f.linkFlags.register(cmd)
	f.saving.register(cmd)
	f.webFlags.register(cmd)
	f.dut.register(cmd, true)
	return cmd
}

func runServer(e *env, cmd *cobra.Command, f *serverFlags) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	if err := f.dut.checkShell(); err != nil {
		return err
	}
	for name, v := range map[string]float64{"--interval": f.interval, "--idle-timeout": f.idle, "--max-duration": f.maxDuration} {
		if _, err := seconds(name, v); err != nil {
			return err
		}
	}
	allow, err := admit.ParseAllow(f.allowReverse)
	if err != nil {
		return usagef("invalid --allow-reverse: %v", err)
	}
	deny, err := admit.ParseAllow(f.denyReverse)
	if err != nil {
		return usagef("invalid --deny-reverse: %v", err)
	}
	if f.maxPerSource < 0 {
		return usagef("invalid --max-tests-per-source %d: want a count ≥ 0 (0 = no limit)", f.maxPerSource)
	}
	if v := f.maxNewPerSecond; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return usagef("invalid --max-new-tests-per-second-per-source %v: want tests per second ≥ 0 (0 = no limit)", v)
	}
	if f.port < 0 || f.port > 65535 {
		return usagef("invalid port %d", f.port)
	}
	if f.iperf3Port < 0 || f.iperf3Port > 65535 {
		return usagef("invalid --iperf3-port %d", f.iperf3Port)
	}
	var maxRate float64
	if f.maxRate != "" {
		r, err := units.ParseRate(f.maxRate)
		if err != nil || r.PPS || r.Value <= 0 {
			return usagef("invalid --max-rate %q: want a rate in bit/s like 100M", f.maxRate)
		}
		maxRate = r.Value
	}
	link, err := f.linkFlags.resolve()
	if err != nil {
		return err
	}
	if err := f.saving.check(); err != nil {
		return err
	}
	defer f.saving.close()
	auth, err := f.auth.resolve(cmd)
	if err != nil {
		return err
	}
	sock, err := f.sockFlags.options()
	if err != nil {
		return err
	}
	unit, err := f.sockFlags.unit()
	if err != nil {
		return err
	}
	if w, ok := e.stdout.(*errWriter); ok {
		// A server runs for hours: say at once when its results stop
		// reaching the output, rather than only at exit.
		w.onErr = func(err error) {
			e.logf("writing results failed: %v; the server goes on, but results are lost while writing fails", err)
		}
	}
	out := &syncWriter{w: e.stdout}
	var mu sync.Mutex // guards texts and csvHeader
	texts := map[int]*report.Text{}
	csvHeader := false
	text := func(id int) *report.Text {
		mu.Lock()
		defer mu.Unlock()
		t := texts[id]
		if t == nil {
			t = report.NewText(out, strconv.Itoa(id))
			t.SetFormat(unit)
			t.SetEnhanced(f.enhanced)
			texts[id] = t
		}
		return t
	}
	cfg := session.ServerConfig{
		Bind: f.bind, Port: f.port, OneShot: f.oneShot, MaxTests: f.maxTests,
		Interval:     time.Duration(f.interval * float64(time.Second)),
		IdleTimeout:  time.Duration(f.idle * float64(time.Second)),
		MaxDuration:  time.Duration(f.maxDuration * float64(time.Second)),
		MaxSendRate:  maxRate,
		AllowReverse: allow, DenyReverse: deny, MaxTestsPerSource: noLimit(f.maxPerSource), NewTestsPerSecondPerSource: noLimit(f.maxNewPerSecond),
		Socket: sock, IPv6: f.v6, NoGSO: f.noGSO, NoGRO: f.noGRO,
		OnLog: func(msg string) { e.logf("%s", msg) },
	}
	if f.port == 0 {
		cfg.Port = -1
	}
	udpTests := map[int]bool{} // guarded by mu
	if format == formatText {
		cfg.OnTestStart = func(id int, r *result.Result) {
			mu.Lock()
			udpTests[id] = r.Test.Protocol == result.UDP
			mu.Unlock()
			text(id).Header(r.Test, "server", "", r.Test.Peer)
		}
		cfg.OnInterval = func(id int, in result.Interval) {
			mu.Lock()
			udp := udpTests[id]
			mu.Unlock()
			text(id).Interval(strconv.Itoa(id), in, udp, in.Flow != "reverse")
		}
		// Parallel streams of one client (iperf -P): each stream's line,
		// then the SUM, under the group's one table.
		cfg.OnGroupInterval = func(group int, streams []session.StreamInterval, sum *result.Interval) {
			mu.Lock()
			udp := udpTests[group]
			mu.Unlock()
			t := text(group)
			for _, st := range streams {
				t.Interval(strconv.Itoa(st.ID), st.Interval, udp, true)
			}
			if sum != nil {
				t.Interval("SUM", *sum, udp, true)
			}
		}
	}
	printResult := func(id int, r *result.Result) {
		switch format {
		case formatJSON:
			_ = report.WriteJSON(out, r, false)
		case formatCSV:
			mu.Lock()
			if !csvHeader {
				_ = report.WriteCSVHeader(out)
				csvHeader = true
			}
			mu.Unlock()
			_ = report.WriteCSV(out, r)
		default:
			t := text(id)
			t.Summary(r)
			mu.Lock()
			delete(texts, id)
			delete(udpTests, id)
			for _, st := range r.Streams {
				delete(texts, st.ID)
				delete(udpTests, st.ID)
			}
			mu.Unlock()
			if r.Device != nil {
				_ = report.WriteDevice(out, r)
			}
		}
	}
	if f.dut.enabled() {
		return f.runServerDUT(e, cfg, func(id int, r *result.Result) {
			link.apply(r)
			f.saving.saveTest(e, r, format)
			printResult(id, r)
		})
	}
	// Each test is saved as it ends, then printed, by one worker: never on
	// the goroutine that ended it (for UDP the one reader of every test,
	// which must go on answering FINs). A store that fails says so on
	// stderr once (until a save works again) and in every JSON document
	// it could not keep; a store slower than the tests end only makes the
	// line longer: no test is left unsaved for it.
	var queue saveLine[endedTest]
	saverDone := make(chan struct{})
	go func() {
		defer close(saverDone)
		for t := range queue.all() {
			r := t.r
			id, w := f.saving.save(e, result.KindTest, r.Test.Peer, testSummary(r), r.StartedAt, result.Sanitize(r))
			if (w != "" || id > 0) && format == formatJSON || w != "" && format == formatCSV {
				// A copy: others (the dashboard) may be reading t.r now.
				c := *r
				if w != "" {
					c.Warnings = append(slices.Clip(r.Warnings), w)
				}
				if format == formatJSON {
					c.RunID = id
				}
				r = &c
			}
			printResult(t.id, r)
		}
	}()
	// Serve returns once every test has ended: the last results are saved
	// and printed before the command returns.
	defer func() { queue.close(); <-saverDone }()
	cfg.OnResult = func(id int, r *result.Result) {
		link.apply(r)
		if f.saving.noSave {
			printResult(id, r)
			return
		}
		queue.push(endedTest{id, r})
	}
	if f.webFlags.addr != "" {
		if f.interval == 0 {
			// The live charts need intervals: take them each second,
			// printing none as asked (docs/web.md).
			cfg.Interval = time.Second
			cfg.OnInterval, cfg.OnGroupInterval = nil, nil
		}
	}
	var hist web.History // without saving: the server's own results, in memory
	if !f.saving.noSave {
		hist = storeHistory{&f.saving}
	}
	ecfg := echo.ServerConfig{IdleTimeout: cfg.IdleTimeout, OnLog: cfg.OnLog}
	serveWeb, err := f.webFlags.attachWeb(e, &cfg, &ecfg, hist)
	if err != nil {
		return err
	}
	srv, err := session.Listen(e.ctx, cfg)
	if err != nil {
		return err
	}
	if err := serveWeb(); err != nil {
		return err
	}
	echo.Register(srv, ecfg)
	i3 := iperf3.Config{Port: f.iperf3Port, MaxRate: maxRate, Auth: auth}
	if auth != nil {
		e.logf("%s", f.auth.describe(auth))
	}
	if f.iperf3Port == srv.Port() {
		i3.Port = 0 // iperf3 is recognised on the main port anyway
	}
	i3port, err := iperf3.Enable(e.ctx, srv, i3)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w (is an iperf3 server running? --iperf3-port 0 answers iperf3 clients on port %d only, or pick another port)", err, srv.Port())
		}
		return err
	}
	if i3port != 0 {
		e.logf("iperf3 clients also on TCP and UDP port %d", i3port)
	}
	if format == formatText {
		report.NewText(out, "").Listening(f.bind, srv.Port())
	} else {
		e.logf("listening on TCP and UDP port %d", srv.Port())
	}
	return srv.Serve(e.ctx)
}

// noLimit turns a flag's "0 = no limit" into the session's negative "no
// limit" (its 0 means the default).
func noLimit[T int | float64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// runServerDUT answers one test: the one the device (--dut) runs as client
// against this server. Its result is printed with the device's figures.
func (f *serverFlags) runServerDUT(e *env, cfg session.ServerConfig, printResult func(int, *result.Result)) error {
	o, sp, err := f.dut.options()
	if err != nil {
		return err
	}
	t, err := f.dut.serverTest(f.udp, sp, f.port)
	if err != nil {
		return err
	}
	s, err := f.dut.open(e.ctx, o)
	if err != nil {
		return err // the device would be the only sender: nothing to measure
	}
	defer s.Close()
	id := 0
	cfg.OnResult = func(i int, _ *result.Result) { id = i }
	port, run, err := s.ListenOne(e.ctx, cfg)
	if err != nil {
		return err
	}
	t.Port = port
	e.logf("listening on TCP and UDP port %d; device shell %s sends %s to %s", port, s.Shell(), t.Proto, t.Peer)
	r, err := s.RunDeviceClient(e.ctx, t, run)
	f.dut.writeTranscript(e, r)
	if r != nil {
		printResult(id, r)
	}
	return err
}

// endedTest is a server test waiting to be saved and printed.
type endedTest struct {
	id int
	r  *result.Result
}

// saveLine is a first-in first-out line with no bound between the
// goroutines that end tests and the one that saves them: push never
// blocks (a test's goroutine must not wait on the store) and never drops
// (each entry is one result, a few kilobytes, where a lost one is a run
// the user cannot find again).
type saveLine[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	wake   chan struct{} // one pending signal at most
	once   sync.Once
}

func (l *saveLine[T]) init() { l.once.Do(func() { l.wake = make(chan struct{}, 1) }) }

// push appends t.
func (l *saveLine[T]) push(t T) {
	l.init()
	l.mu.Lock()
	l.items = append(l.items, t)
	l.mu.Unlock()
	l.signal()
}

// close ends all() once every item pushed before it has been taken.
func (l *saveLine[T]) close() {
	l.init()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.signal()
}

func (l *saveLine[T]) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// all yields the items in the order they were pushed until the line is
// closed and empty.
func (l *saveLine[T]) all() iter.Seq[T] {
	l.init()
	return func(yield func(T) bool) {
		for {
			l.mu.Lock()
			if len(l.items) == 0 {
				closed := l.closed
				l.mu.Unlock()
				if closed {
					return
				}
				<-l.wake
				continue
			}
			t := l.items[0]
			var zero T
			l.items[0] = zero
			l.items = l.items[1:]
			l.mu.Unlock()
			if !yield(t) {
				return
			}
		}
	}
}
