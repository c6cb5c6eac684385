package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/client"
	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/dut"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// clientFlags are the client command's flags as typed.
type clientFlags struct {
	client.Options
	json, csv  bool
	jsonIperf3 bool // iperf3 -J output
	auth       clientAuthFlags
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
                 iperf3 server answers, else iperf2 (a fallback when it cannot
                 tell). The default on ports but 5001 (iperf2) and 5201 (iperf3);
                 stderr says so before the probe, the choice after (text; JSON:
                 dialect_chosen_by). Device dialects (iperf2-legacy, raw): name them.`,
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
	fl.IntVarP(&f.Port, "port", "p", session.DefaultPort, "server port")
	fl.BoolVarP(&f.UDP, "udp", "u", false, "use UDP (default TCP)")
	fl.StringVarP(&f.Rate, "bandwidth", "b", "", "send UDP at `RATE`: bit/s with k/M/G (100M) or packets/s (8000pps); default 1 Mbit/s")
	fl.Float64VarP(&f.Seconds, "time", "t", 10, "test duration in seconds")
	fl.StringVarP(&f.Num, "num", "n", "", "send this many `BYTES` instead of for a time (K/M/G)")
	fl.Float64VarP(&f.Interval, "interval", "i", 0, "seconds between interval reports (0 = none)")
	fl.IntVarP(&f.Omit, "omit", "O", 0, "leave the first `N` seconds out of the summary (shown, marked \"(omitted)\"); the test runs N + -t seconds. iperf3 peers are asked to omit them too")
	fl.StringVarP(&f.Length, "len", "l", "", "datagram payload (UDP, default 1470; iperf3 1460) or write size (TCP, default 128K), in `BYTES` (K/M)")
	fl.IntVarP(&f.Parallel, "parallel", "P", 1, "parallel streams")
	fl.BoolVarP(&f.Reverse, "reverse", "R", false, "the server sends, on our connection (iperf 2.1)")
	fl.BoolVarP(&f.Tradeoff, "tradeoff", "r", false, "then the server connects back and sends (legacy)")
	fl.BoolVarP(&f.Dual, "dualtest", "d", false, "the server connects back and sends at the same time (legacy)")
	fl.IntVarP(&f.ListenPort, "listenport", "L", 0, "port to listen on for -r/-d (default the server port; a free one when the server is on this host)")
	fl.BoolVar(&f.FullDuplex, "full-duplex", false, "send and receive on one TCP connection (iperf 2.1)")
	fl.StringVarP(&f.Congestion, "congestion", "C", "", "TCP congestion control for our connections (Linux: cubic, bbr, reno, ...; default the system's)")
	fl.StringVar(&f.Dialect, "dialect", "", dialectFlagHelp)
	fl.BoolVar(&f.Bidir, "bidir", false, "iperf3: both directions at once, -P streams each")
	fl.BoolVar(&f.Counters64, "udp-counters-64bit", false, "iperf3: 64-bit UDP sequence numbers")
	fl.BoolVar(&f.jsonIperf3, "json-iperf3", false, "iperf3: print iperf3's own -J document instead of wirebench/1")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON document (schema wirebench/1, docs/json.md)")
	fl.BoolVar(&f.csv, "csv", false, "print intervals and summary as CSV")
	f.auth.register(cmd)
	fl.StringVarP(&f.Bind, "bind", "B", "", "local address (and port) our connections start from: host, host:port, [v6]:port")
	fl.BoolVarP(&f.ZeroCopy, "zerocopy", "Z", false, "TCP: send with sendfile from a file holding the payload, without copying it from memory (iperf3's -Z; iperf 2's -Z is our -C)")
	fl.IntVar(&f.CPort, "cport", 0, "local port of the data streams; with -P, stream i uses this port + i")
	f.sockFlags.register(cmd)
	f.offloadFlags.register(cmd)
	fl.BoolVarP(&f.enhanced, "enhanced", "e", false, "enhanced text output (iperf2 -e): a TCP sender's retransmits, congestion window, RTT and MSS")
	f.linkFlags.register(cmd)
	f.latencyFlags.register(cmd)
	f.saving.register(cmd)
	f.dut.register(cmd, false)
	return cmd, f
}

// config turns the flags into a session config (client.Options.Config),
// with usage errors for anything malformed.
func (f *clientFlags) config(_ *cobra.Command, host string) (session.ClientConfig, error) {
	o := f.Options
	o.Socket, o.IPv6, o.NoGSO, o.NoGRO = f.sockFlags.typed(), f.v6, f.noGSO, f.noGRO
	if err := o.CheckDialect(); err != nil {
		return session.ClientConfig{}, usage(err)
	}
	if err := f.dut.checkShell(); err != nil {
		return session.ClientConfig{}, err
	}
	cfg, err := o.Config(host)
	return cfg, usage(err)
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
	if err := f.auth.Check(); err != nil {
		return usageError{err} // before the probe: a mistake costs no traffic
	}
	given := cmd.Flags().Changed("dialect")
	choice, err := client.ChooseDialect(e.ctx, cfg, given, f.dut.enabled(), e.logf)
	if err != nil {
		return usageOrRun(err)
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
		if dev != nil && devErr == nil && dev.Dialect() != "" && !given {
			choice.By = probe.ChosenByDevice
		}
		if dev != nil {
			defer dev.Close()
		}
	}
	if f.jsonIperf3 {
		return runClientIperf3JSON(e, cfg, choice, format, &f.saving)
	}
	latency, err := f.latencyFlags.probe(cfg.Port)
	if err == nil && latency != nil && format == formatCSV {
		err = usagef("--latency has no CSV form: use --json or text")
	}
	if err != nil {
		return err
	}
	// Every usage error before the banner; the banner says what will run.
	prepared, err := dialect.Prepare(cfg)
	if err != nil {
		return choice.Explain(usageOrRun(err))
	}
	text := report.NewText(e.stdout, "1")
	text.SetFormat(unit)
	text.SetEnhanced(f.enhanced)
	if format == formatText {
		client.Announce(e.logf, choice, prepared)
		cfg.OnInterval = func(in result.Interval) {
			text.Interval(report.IntervalID(cfg.Parallel), in, cfg.UDP, in.Flow == "reverse" || cfg.Reverse)
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
		r, lat, err = client.Run(e.ctx, cfg, choice, latency)
	}
	if err != nil {
		return usageOrRun(err)
	}
	client.Note(r, choice, cfg.Dialect)
	link.Apply(r)
	if lat != nil {
		return finishUnderLoad(e, format, text, r, lat, &f.saving)
	}
	if err := f.printTest(e, format, text, r); err != nil {
		return err
	}
	return deviceFailed
}

// printTest saves and prints a client result; its error is the output's,
// else the test's when it ended early.
func (f *clientFlags) printTest(e *env, format outputFormat, text *report.Text, r *result.Result) error {
	// Saved before printing, so a store that cannot be written is a
	// warning in the JSON document too.
	id := f.saving.saveTest(e, r, format)
	defer f.saving.announce(e, id, format)
	var err error
	switch format {
	case formatJSON:
		r.RunID = id
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
	if err == nil && r.Error != "" {
		err = fmt.Errorf("test ended early: %s", r.Error)
	}
	return err
}

// openDUT checks the --dut flags against the test, connects to the device
// and adopts the dialect its server needs. A device that cannot be reached
// is not fatal here (devErr): our client still runs, as the device's
// server may be running already.
func (f *clientFlags) openDUT(e *env, cmd *cobra.Command, cfg *session.ClientConfig) (s *dut.Session, devErr, err error) {
	if f.lat.Proto != "" || f.jsonIperf3 {
		return nil, nil, usagef("--dut cannot be combined with --latency or --json-iperf3")
	}
	o, _, err := f.dut.options()
	if err != nil {
		return nil, nil, err
	}
	if _, err := clientTest(*cfg, f.dut.Iface, f.dut.shellDialect()); err != nil {
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

// usageOrRun classifies a session error: config problems are usage errors.
func usageOrRun(err error) error {
	if session.IsConfigError(err) {
		return usageError{err}
	}
	return err
}

// runClientIperf3JSON runs an iperf3 test and prints iperf3's -J document.
func runClientIperf3JSON(e *env, cfg session.ClientConfig, choice probe.DialectChoice, format outputFormat, saving *saveFlags) error {
	if err := client.CheckIperf3(cfg, choice); err != nil {
		return usage(err)
	}
	if format != formatText {
		return usagef("--json-iperf3 replaces --json and --csv")
	}
	r, rep, err := client.RunIperf3(e.ctx, cfg, choice)
	if err != nil {
		return usageOrRun(err)
	}
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

// dialectNames are the values --dialect takes (client.DialectNames).
func dialectNames() []string { return client.DialectNames() }
