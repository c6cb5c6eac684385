package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	iperf3session "github.com/wirebench/wirebench/internal/session/iperf3"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// clientFlags are the client command's flags as typed.
type clientFlags struct {
	port       int
	udp        bool
	rate       string
	seconds    float64
	num        string
	interval   float64
	omit       int
	length     string
	parallel   int
	reverse    bool
	tradeoff   bool
	dual       bool
	listenPort int
	fullDuplex bool
	dialect    string
	congestion string
	json, csv  bool
	bidir      bool // iperf3 --bidir
	counters64 bool // iperf3 --udp-counters-64bit
	jsonIperf3 bool // iperf3 -J output
	auth       clientAuthFlags
	bind       string
	cport      int
	zeroCopy   bool
	sockFlags
	offloadFlags
	enhanced bool // iperf2 -e
	linkFlags
	latencyFlags
	saving saveFlags
	dut    dutFlags
}

func newClientCmd(e *env) *cobra.Command {
	cmd, _ := newClientCmdFlags(e)
	return cmd
}

// newClientCmdFlags is newClientCmd, also returning the flags its command
// line fills (for the flag-syntax fuzz target).
func newClientCmdFlags(e *env) (*cobra.Command, *clientFlags) {
	f := &clientFlags{}
	cmd := &cobra.Command{
		Use:   "client HOST",
		Short: "Run a test against an iperf2 or iperf3 server (iperf, iperf3, zperf, lwiperf, ESP-IDF, wirebench)",
		Long: `Run one test against HOST, which may be a real iperf 2 server, a device's built-in
iperf (zperf, lwiperf, ESP-IDF, vendor stacks) or a wirebench server.

The dialect decides what goes on the wire:
  iperf2         iperf 2.1 style: 16-byte UDP header, 60-byte TCP header
  iperf2-legacy  iperf 2.0.5 / lwiperf style: 12-byte UDP header, ids from 0,
                 24-byte TCP header repeated every 128 KiB
  raw            no test header (what zperf and ESP-IDF send)
  iperf3         iperf3's protocol (the default with -p 5201)
  auto           probe the peer with one short TCP exchange first: iperf3 if an
                 iperf3 server answers, else iperf2 (said as a fallback when the
                 probe cannot tell). The default on any port but 5201; the choice
                 is on stderr (text) and in the JSON (dialect_chosen_by). Device
                 dialects (iperf2-legacy, raw) are never guessed: name them.`,
		Example: `  wirebench client 192.0.2.1 -u -b 100M -i 1 -t 10
  wirebench -c 192.0.2.1 -u -b 8000pps -l 64
  wirebench client 192.0.2.1 --dialect iperf2-legacy -r -L 5002
  wirebench client 192.0.2.1 -u -b 10M --json
  wirebench client 192.0.2.1 -u -b 100M --label device=pic32 --label link=usb   # saved with labels (docs/store.md)
  wirebench client 192.0.2.1 --no-save
  wirebench client 192.0.2.1 -u -b 50M -t 10 --dut serial:/dev/ttyACM0 --dut-shell zephyr`,
		Args: exactArgs(1, "one HOST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClient(e, cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.port, "port", "p", session.DefaultPort, "server port")
	fl.BoolVarP(&f.udp, "udp", "u", false, "use UDP (default TCP)")
	fl.StringVarP(&f.rate, "bandwidth", "b", "", "send UDP at `RATE`: bit/s with k/M/G (100M) or packets/s (8000pps); default 1 Mbit/s")
	fl.Float64VarP(&f.seconds, "time", "t", 10, "test duration in seconds")
	fl.StringVarP(&f.num, "num", "n", "", "send this many `BYTES` instead of for a time (K/M/G)")
	fl.Float64VarP(&f.interval, "interval", "i", 0, "seconds between interval reports (0 = none)")
	fl.IntVarP(&f.omit, "omit", "O", 0, "leave the first `N` seconds out of the summary (shown, marked \"(omitted)\"); the test runs N + -t seconds. iperf3 peers are asked to omit them too")
	fl.StringVarP(&f.length, "len", "l", "", "datagram payload (UDP, default 1470; iperf3 1460) or write size (TCP, default 128K), in `BYTES` (K/M)")
	fl.IntVarP(&f.parallel, "parallel", "P", 1, "parallel streams")
	fl.BoolVarP(&f.reverse, "reverse", "R", false, "the server sends, on our connection (iperf 2.1)")
	fl.BoolVarP(&f.tradeoff, "tradeoff", "r", false, "then the server connects back and sends (legacy)")
	fl.BoolVarP(&f.dual, "dualtest", "d", false, "the server connects back and sends at the same time (legacy)")
	fl.IntVarP(&f.listenPort, "listenport", "L", 0, "port to listen on for -r/-d (default the server port)")
	fl.BoolVar(&f.fullDuplex, "full-duplex", false, "send and receive on one TCP connection (iperf 2.1)")
	fl.StringVarP(&f.congestion, "congestion", "C", "", "TCP congestion control for our connections (Linux: cubic, bbr, reno, ...; default the system's)")
	fl.StringVar(&f.dialect, "dialect", "", dialectFlagHelp)
	fl.BoolVar(&f.bidir, "bidir", false, "iperf3: both directions at once, -P streams each")
	fl.BoolVar(&f.counters64, "udp-counters-64bit", false, "iperf3: 64-bit UDP sequence numbers")
	fl.BoolVar(&f.jsonIperf3, "json-iperf3", false, "iperf3: print iperf3's own -J document instead of wirebench/1")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON document (schema wirebench/1, docs/json.md)")
	fl.BoolVar(&f.csv, "csv", false, "print intervals and summary as CSV")
	f.auth.register(cmd)
	fl.StringVarP(&f.bind, "bind", "B", "", "local address (and port) our connections start from: host, host:port, [v6]:port")
	fl.BoolVarP(&f.zeroCopy, "zerocopy", "Z", false, "TCP: send with sendfile from a file holding the payload, without copying it from memory (iperf3's -Z; iperf 2's -Z is our -C)")
	fl.IntVar(&f.cport, "cport", 0, "local port of the data streams; with -P, stream i uses this port + i")
	f.sockFlags.register(cmd)
	f.offloadFlags.register(cmd)
	fl.BoolVarP(&f.enhanced, "enhanced", "e", false, "enhanced text output (iperf2 -e): a TCP sender's retransmits, congestion window, RTT and MSS")
	f.linkFlags.register(cmd)
	f.latencyFlags.register(cmd)
	f.saving.register(cmd)
	f.dut.register(cmd, false)
	return cmd, f
}

// config turns the flags into a session config, with usage errors for
// anything malformed.
func (f *clientFlags) config(cmd *cobra.Command, host string) (session.ClientConfig, error) {
	cfg := session.ClientConfig{
		Host: host, Port: f.port, UDP: f.udp, Parallel: f.parallel, Dialect: f.dialect,
		Reverse: f.reverse, Tradeoff: f.tradeoff, Dual: f.dual, ListenPort: f.listenPort, FullDuplex: f.fullDuplex,
		Bidir: f.bidir, UDPCounters64Bit: f.counters64, Congestion: f.congestion,
	}
	if f.dialect != "" {
		if err := enumFlag("--dialect", f.dialect, dialectNames()...); err != nil {
			return cfg, err
		}
	}
	if err := f.dut.checkShell(); err != nil {
		return cfg, err
	}
	if f.parallel < 1 {
		return cfg, usagef("invalid -P %d: want at least 1 stream", f.parallel)
	}
	if f.seconds <= 0 || math.IsInf(f.seconds, 0) || math.IsNaN(f.seconds) || f.seconds > 86400*365 {
		return cfg, usagef("invalid duration -t %v: want seconds > 0", f.seconds)
	}
	cfg.Duration = time.Duration(f.seconds * float64(time.Second))
	var err error
	if cfg.Interval, err = intervalSeconds(f.interval); err != nil {
		return cfg, err
	}
	if f.omit < 0 || time.Duration(f.omit)*time.Second > session.MaxOmit {
		return cfg, usagef("invalid -O %d: want 0-%d seconds", f.omit, int(session.MaxOmit/time.Second))
	}
	cfg.Omit = time.Duration(f.omit) * time.Second
	if f.rate != "" {
		r, err := units.ParseRate(f.rate)
		if err != nil {
			return cfg, usageError{err}
		}
		if !f.udp {
			return cfg, usagef("-b sets a UDP rate; add -u (TCP is not paced)")
		}
		cfg.Rate = r
	}
	if f.num != "" {
		n, err := units.ParseSize(f.num)
		if err != nil || n == 0 {
			return cfg, usagef("invalid byte count -n %q: want a positive size like 10M", f.num)
		}
		cfg.Bytes, cfg.Duration = n, 0
	}
	if f.length != "" {
		n, err := units.ParseSize(f.length)
		if err != nil {
			return cfg, usageError{err}
		}
		cfg.Length = int(min(n, math.MaxInt32))
	}
	if f.listenPort != 0 && !f.tradeoff && !f.dual {
		return cfg, usagef("-L is the port for the -r/-d connect-back; add -r or -d")
	}
	if cfg.Socket, err = f.sockFlags.options(); err != nil {
		return cfg, err
	}
	cfg.IPv6, cfg.ZeroCopy = f.v6, f.zeroCopy
	cfg.NoGSO, cfg.NoGRO = f.noGSO, f.noGRO
	if f.zeroCopy && f.udp {
		return cfg, usagef("-Z (zero-copy send) is for TCP")
	}
	if f.bind != "" {
		if cfg.BindHost, cfg.CPort, err = parseBind(f.bind); err != nil {
			return cfg, err
		}
	}
	if f.cport != 0 {
		if cfg.CPort != 0 {
			return cfg, usagef("-B %s already names the client port; drop --cport or the port in -B", f.bind)
		}
		if f.cport < 1 || f.cport > 65535 {
			return cfg, usagef("invalid --cport %d: want 1-65535", f.cport)
		}
		cfg.CPort = f.cport
	}
	return cfg, nil
}

func runClient(e *env, cmd *cobra.Command, host string, f *clientFlags) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	cfg, err := f.config(cmd, host)
	if err != nil {
		return err
	}
	if err := f.saving.check(); err != nil {
		return err
	}
	defer f.saving.close()
	link, err := f.linkFlags.resolve()
	if err != nil {
		return err
	}
	unit, err := f.sockFlags.unit()
	if err != nil {
		return err
	}
	choice := probe.DialectChoice{Dialect: session.DialectIperf3, By: probe.ChosenByPort}
	if f.dut.enabled() {
		// The device's server decides (openDUT), unless --dialect names one.
		switch given := cmd.Flags().Changed("dialect"); {
		case given && f.dialect == probe.DialectAuto:
			return usagef("--dialect auto cannot be combined with --dut: the device's shell says which dialect its server needs")
		case given:
			choice = probe.DialectChoice{Dialect: f.dialect, By: probe.ChosenByFlag}
		case f.port != session.DefaultIperf3Port:
			choice = probe.DialectChoice{By: probe.ChosenByDevice}
		}
	} else {
		given := cmd.Flags().Changed("dialect")
		if probe.WillProbe(f.port, f.dialect, given) {
			if err := probe.Precheck(cfg); err != nil {
				return usageOrRun(err)
			}
		}
		choice = probe.ChooseDialect(e.ctx, host, f.port, f.dialect, given)
		if e.ctx.Err() != nil {
			return fmt.Errorf("interrupted while probing %s for its dialect: no test ran", host)
		}
	}
	cfg.Dialect = choice.Dialect
	if cfg.Auth, err = f.auth.resolve(e, cfg.Dialect); err != nil {
		return choice.Explain(err)
	}
	var dev *dut.Session
	var devErr error
	if f.dut.enabled() {
		if dev, devErr, err = f.openDUT(e, cmd, &cfg); err != nil {
			return err
		}
		if dev != nil && devErr == nil && dev.Dialect() != "" && !cmd.Flags().Changed("dialect") {
			choice.By = probe.ChosenByDevice
		}
		if dev != nil {
			defer dev.Close()
		}
	}
	if f.jsonIperf3 {
		return runClientIperf3JSON(e, cfg, choice, format, &f.saving)
	}
	// Every usage error before the banner; the banner says what will run.
	prepared, err := dialect.Prepare(cfg)
	if err != nil {
		return choice.Explain(usageOrRun(err))
	}
	if format == formatText {
		announceDialect(e, choice)
	}
	text := report.NewText(e.stdout, "1")
	text.SetFormat(unit)
	text.SetEnhanced(f.enhanced)
	if format == formatText {
		cfg.OnInterval = func(in result.Interval) {
			text.Interval(intervalID(cfg.Parallel), in, cfg.UDP, in.Flow == "reverse" || cfg.Reverse)
		}
		cfg.OnConnected = text.Connected
		text.Header(session.PreviewTest(prepared), "client", "", "")
	}
	var r *result.Result
	var lat *result.UnderLoad
	var deviceFailed error
	if f.dut.enabled() {
		r, err = f.dut.runClientDUT(e, cfg, dev, devErr)
		if deviceErr(err) && r != nil {
			deviceFailed, err = err, nil
		}
	} else {
		type ran struct {
			r   *result.Result
			lat *result.UnderLoad
		}
		var got ran
		got, err = probe.AfterProbe(e.ctx, choice, func() (ran, error) {
			r, lat, err := f.latencyFlags.runClient(e, cfg, format)
			return ran{r, lat}, err
		})
		r, lat = got.r, got.lat
	}
	if err != nil {
		return usageOrRun(err)
	}
	r.Test.DialectChosenBy, r.Test.DialectReason = choice.By, choice.Reason
	if choice.By == probe.ChosenByProbe && cfg.Dialect == session.DialectIperf2 {
		// The peer acked as iperf 2 a moment ago: not an iperf3 server.
		r.Error = strings.Replace(r.Error, session.Iperf3Hint, "the peer acked as iperf 2 when probed a moment ago, "+
			"so it is not an iperf3 server: iperf 2.1.8's server sometimes drops a test that follows another; run it again", 1)
	}
	link.Apply(r)
	if lat != nil {
		return finishUnderLoad(e, format, text, r, lat, &f.saving)
	}
	// Saved before printing, so a store that cannot be written is a
	// warning in the JSON document too.
	id := f.saving.saveTest(e, r, format)
	defer f.saving.announce(e, id, format)
	if format == formatJSON {
		r.RunID = id
	}
	switch format {
	case formatJSON:
		err = report.WriteJSON(e.stdout, r, true)
	case formatCSV:
		if err = report.WriteCSVHeader(e.stdout); err == nil {
			err = report.WriteCSV(e.stdout, r)
		}
	default:
		text.Summary(r)
		if err = text.Err(); err == nil {
			err = report.WriteDevice(e.stdout, r)
		}
	}
	if err != nil {
		return err
	}
	if r.Error != "" {
		return fmt.Errorf("test ended early: %s", r.Error)
	}
	return deviceFailed
}

// openDUT checks the --dut flags against the test, connects to the device
// and adopts the dialect its server needs. A device that cannot be reached
// is not fatal here (devErr): our client still runs, as the device's
// server may be running already.
func (f *clientFlags) openDUT(e *env, cmd *cobra.Command, cfg *session.ClientConfig) (s *dut.Session, devErr, err error) {
	if f.latency != "" || f.jsonIperf3 {
		return nil, nil, usagef("--dut cannot be combined with --latency or --json-iperf3")
	}
	o, _, err := f.dut.options()
	if err != nil {
		return nil, nil, err
	}
	if _, err := clientTest(*cfg, f.dut.iface, f.dut.shellDialect()); err != nil {
		return nil, nil, err
	}
	s, devErr = f.dut.open(e.ctx, o)
	if devErr != nil {
		e.logf("%v; running our side alone", devErr)
		return s, devErr, nil
	}
	adoptDialect(e, s, &cfg.Dialect, cmd.Flags().Changed("dialect"))
	return s, nil, nil
}

// intervalID is the bracketed id of an interval line: SUM over several
// streams.
func intervalID(parallel int) string {
	if parallel > 1 {
		return "SUM"
	}
	return "1"
}

// usageOrRun classifies a session error: config problems are usage errors.
func usageOrRun(err error) error {
	if session.IsConfigError(err) {
		return usageError{err}
	}
	return err
}

// runClientIperf3JSON runs an iperf3 test and prints iperf3's -J document.
func runClientIperf3JSON(e *env, cfg session.ClientConfig, choice probe.DialectChoice, format outputFormat, saving *saveFlags) error {
	if cfg.Dialect != session.DialectIperf3 {
		if choice.Reason != "" {
			return usagef("--json-iperf3 needs the iperf3 dialect, and the peer is not an iperf3 server (%s)", choice.Line())
		}
		return usagef("--json-iperf3 needs the iperf3 dialect (--dialect iperf3, or -p 5201)")
	}
	if format != formatText {
		return usagef("--json-iperf3 replaces --json and --csv")
	}
	cfg.OnInterval = nil
	type ran struct {
		r   *result.Result
		rep *iperf3.Report
	}
	got, err := probe.AfterProbe(e.ctx, choice, func() (ran, error) {
		r, rep, err := iperf3session.RunClient(e.ctx, cfg)
		return ran{r, rep}, err
	})
	if err != nil {
		return usageOrRun(err)
	}
	r, rep := got.r, got.rep
	r.Test.DialectChosenBy, r.Test.DialectReason = choice.By, choice.Reason
	// iperf3's own document has no place for our warnings: stderr only.
	defer saving.announce(e, saving.saveTest(e, r, formatText), formatText)
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "\t")
	if err := enc.Encode(rep); err != nil {
		return err
	}
	if r.Error != "" {
		return fmt.Errorf("test ended early: %s", r.Error)
	}
	return nil
}

// dialectNames are the values --dialect takes: the session's dialects and
// auto (probe the peer first).
func dialectNames() []string { return append(dialect.Names(), probe.DialectAuto) }
