package cli

import (
	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/admit"
	"github.com/wirebench/wirebench/internal/priority"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/serve"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf3"
	"github.com/wirebench/wirebench/internal/web"
)

type serverFlags struct {
	serve.Options
	json, csv bool
	auth      serverAuthFlags
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
	fl.IntVarP(&f.Port, "port", "p", session.DefaultPort, "TCP and UDP port to listen on")
	fl.StringVarP(&f.Bind, "bind", "B", "", "local address to listen on (default all)")
	fl.BoolVarP(&f.OneShot, "one-off", "1", false, "exit after the first test")
	fl.Float64VarP(&f.Interval, "interval", "i", 0, "seconds between interval reports (0 = none)")
	fl.Float64Var(&f.IdleTimeout, "idle-timeout", 5, "seconds of silence that end a UDP test without FIN or a silent TCP connection")
	fl.IntVar(&f.MaxTests, "max-tests", 1024, "most tests open at once: UDP, iperf3 and TCP tests each (every source shares them; --max-tests-per-source is one source's share); TCP connections beyond 4 times this being served are closed as they are accepted")
	fl.Float64Var(&f.MaxDuration, "max-duration", 3600, "longest this server sends in a reverse, full-duplex or connect-back test, in seconds, whatever the client asks (an hour: raise it for longer soak tests); iperf3 clients asking for more are refused")
	fl.IntVar(&f.Iperf3Port, "iperf3-port", session.DefaultIperf3Port, "also answer iperf3 clients on this port (0 = only on the main port, where they are recognised too)")
	fl.StringVar(&f.MaxRate, "max-rate", "", "most this server sends at, bit/s with k/M/G, in a UDP test a client asked for without authenticating (one spoofable datagram asks): iperf2 UDP -R/-r/-d are sent no faster, iperf3 UDP -R/--bidir asking for more (or unpaced) are refused; given, it also refuses iperf3 tests asking for (or measured at) more; 0 = no limit (default 1G, the line rate of 1 GbE; iperf3 tests that authenticate are not capped by the default)")
	fl.StringSliceVar(&f.AllowReverse, "allow-reverse", nil, "also send UDP reverse and connect-back tests to these sources: CIDR prefixes or addresses, repeatable and comma-separated; \"any\" allows every source (default: only loopback, private, CGNAT, benchmarking 198.18.0.0/15, link-local and ULA sources)")
	fl.StringSliceVar(&f.DenyReverse, "deny-reverse", nil, "never send UDP reverse and connect-back tests to these sources, even on the default networks or in --allow-reverse: CIDR prefixes or addresses, like --allow-reverse")
	fl.IntVar(&f.MaxPerSource, "max-tests-per-source", admit.DefaultMaxActive, "most tests one source address may have open at once (0 = no limit)")
	fl.Float64Var(&f.MaxNewPerSecond, "max-new-tests-per-second-per-source", admit.DefaultPerSecond, "most new tests one source address may open per second, after a burst of --max-tests-per-source (0 = no limit)")
	fl.BoolVar(&f.KeepRaw, "keep-raw", false, "save every header-less (raw) test in the results store; without it one under 10 UDP datagrams or 1 s, or a TCP connection with no data, is printed and counted in the log but not saved")
	fl.IntVar(&f.Nice, "nice", priority.DefaultNice, "scheduling priority (nice, -20..19) the server takes where allowed (root or CAP_SYS_NICE), so a busy host delays its readers less; 0 leaves it as started")
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
	fl.IntVar(&f.saving.keep, "keep-runs", 0, "keep the results store to the newest `N` runs, deleting older ones as tests are saved (0 = keep all; docs/store.md)")
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
	cfg, err := f.ServerConfig()
	if err != nil {
		return usageError{err}
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
	if cfg.Socket, err = f.sockFlags.options(); err != nil {
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
	cfg.IPv6, cfg.NoGSO, cfg.NoGRO = f.v6, f.noGSO, f.noGRO
	cfg.OnLog = func(msg string) { e.logf("%s", msg) }
	printer := serve.NewPrinter(e.stdout, serveOutput(format), unit, f.enhanced)
	if f.dut.enabled() {
		printer.Hook(&cfg)
		return f.runServerDUT(e, cfg, func(id int, r *result.Result) {
			link.Apply(r)
			f.saving.saveTest(e, r, format)
			printer.Print(id, r)
		})
	}
	sc := serve.Config{Server: cfg, Printer: printer, Output: serveOutput(format), Apply: link.Apply, Logf: e.logf, KeepRaw: f.KeepRaw,
		Iperf3: iperf3.Config{Port: f.Iperf3Port, MaxRate: cfg.MaxSendRate, Auth: auth}, AuthNote: f.auth.Describe(auth)}
	if !f.saving.noSave {
		sc.Save = func(r *result.Result) (int64, string) {
			return f.saving.save(e, result.KindTest, r.Test.Peer, report.TestSummary(r), r.StartedAt, result.Sanitize(r))
		}
	}
	if sc.Web, err = f.webFlags.resolve(); err != nil {
		return err
	}
	if !f.saving.noSave && sc.Web != nil {
		sc.Web.History = web.StoreHistory{Open: f.saving.store(e).Open}
	}
	return serve.Run(e.ctx, sc)
}

// serveOutput is format as the server package spells it.
func serveOutput(format outputFormat) serve.Output {
	switch format {
	case formatJSON:
		return serve.JSON
	case formatCSV:
		return serve.CSV
	}
	return serve.Text
}

// runServerDUT answers one test: the one the device (--dut) runs as client
// against this server. Its result is printed with the device's figures.
func (f *serverFlags) runServerDUT(e *env, cfg session.ServerConfig, printResult func(int, *result.Result)) error {
	o, sp, err := f.dut.options()
	if err != nil {
		return err
	}
	t, err := f.dut.serverTest(f.udp, sp, f.Port)
	if err != nil {
		return err
	}
	s, err := f.dut.open(e.ctx, o)
	if err != nil {
		return err // the device would be the only sender: nothing to measure
	}
	defer s.Close()
	id, r, err := s.RunAgainstServer(e.ctx, cfg, t, e.logf)
	f.dut.writeTranscript(e, r)
	if r != nil {
		printResult(id, r)
	}
	return err
}
