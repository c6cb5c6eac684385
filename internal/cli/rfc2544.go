package cli

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/version"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// rfc2544Flags are the rfc2544 command's flags as typed.
type rfc2544Flags struct {
	port     int
	mode     string
	sizes    string
	tests    string
	medium   string
	pdr      string
	loads    string
	strict   bool
	trial    string
	confirm  string
	maxBurst int64
	gap      string
	json     bool
	csv      bool
	// sameClock says the far end reads our clock (a lab on this host).
	sameClock bool
	saving    saveFlags
}

func newRFC2544Cmd(e *env) *cobra.Command {
	f := &rfc2544Flags{}
	cmd := &cobra.Command{
		Use:   "rfc2544 HOST",
		Short: "RFC 2544 benchmark over UDP: throughput (NDR/PDR), latency at load, frame loss rate, back-to-back",
		Long: `Run RFC 2544's four benchmarks per datagram size against a far end
(docs/rfc2544.md):

  throughput  the no-drop rate (NDR) and the partial drop rate (PDR, loss
              <= --pdr), by sweep's search: the rate reported is what the far
              end delivered, its queue grew by at most 0.5 % of a trial, and a
              long trial confirms it; the PDR search reuses the NDR's trials
  latency     at 10, 50, 90 and 100 % of the NDR (--loads): every datagram's
              round trip against a reflector, as a histogram (min, p50, p90,
              p99, p99.9, max); against a wirebench server, its one-way
              transit summary (min, p50, p90, p99, p99.9, max), as one-way
              latency when it reads our clock, else as delay variation only
  loss        the frame loss rate from the medium's maximum rate down in 10 %
              steps until two steps in a row lose nothing
  backtoback  the longest burst at the medium's line rate carried without
              loss (bisected), in frames and microseconds of line time

Trials: 1 s search trials confirmed by a 10 s one, 5 s latency trials, 2 s
loss steps, one back-to-back search (--trial and --confirm change the first
two). --strict uses RFC 2544's: 60 s throughput and loss trials, 20 latency
trials of 120 s per load, 50 back-to-back searches (many hours for 7 sizes).

The far end (--mode): reflect (a UDP reflector: wirebench reflect, a device in
loopback), wirebench (a wirebench server) or iperf2 (an iperf 2 server). The
latency test needs a reflector or a wirebench server, which times each
datagram's arrival (kernel timestamp) against our send stamp: one-way latency
when the server is on loopback, an address of this machine or --same-clock
(a lab namespace on this host), else delay variation only (each trial's
fastest datagram subtracted). Against an iperf 2 server it says why it
cannot run.

Progress and the time left go to stderr; a first Ctrl-C stops after the trial
under way and keeps what finished (marked interrupted). The JSON document has
the schema wirebench/1, kind "rfc2544"; runs are saved in the results store.`,
		Example: `  wirebench rfc2544 127.0.0.1 --mode reflect --medium eth100
  wirebench rfc2544 192.0.2.1 --mode reflect --sizes 64,512,1518 --tests throughput,latency --json
  wirebench rfc2544 192.0.2.1 --mode iperf2 --tests throughput,loss --pdr 0.1% --strict`,
		Args: exactArgs(1, "one HOST"),
		RunE: func(cmd *cobra.Command, args []string) error { return runRFC2544(e, cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.port, "port", "p", session.DefaultPort, "`PORT` of the far end")
	fl.StringVar(&f.mode, "mode", sweep.ModeReflect, "the far end, a `MODE`: reflect, wirebench or iperf2")
	fl.StringVar(&f.sizes, "sizes", "rfc2544", "UDP payload sizes: rfc2544 (the frame sizes 64…1518 on --medium) or a `LIST` like 64,512,1470")
	fl.StringVar(&f.tests, "tests", strings.Join(rfc2544.Tests, ","), "the `TESTS` to run, from "+strings.Join(rfc2544.Tests, ","))
	fl.StringVar(&f.medium, "medium", "eth1g", "the medium `NAME` (see wirebench calc): its maximum rate starts the searches, paces the bursts and the loss steps")
	fl.StringVar(&f.pdr, "pdr", "0.5%", "the loss the partial drop rate allows, a `PERCENT`")
	fl.StringVar(&f.loads, "loads", "10,50,90,100", "the latency test's loads, `PERCENTS` of the NDR")
	fl.BoolVar(&f.strict, "strict", false, "RFC 2544's trial lengths and repetitions (hours)")
	fl.StringVar(&f.trial, "trial", "", "length of each throughput search trial, a `DUR` (default 1s; 60s with --strict)")
	fl.StringVar(&f.confirm, "confirm", "", "length of the trial that confirms a rate, a `DUR` (default 10s; 60s with --strict)")
	fl.Int64Var(&f.maxBurst, "max-burst", 100000, "the longest back-to-back burst to try, in `FRAMES`")
	fl.StringVar(&f.gap, "gap", "", "pause between trials so that queues drain, a `DUR` (default 200ms; 1s with --mode iperf2)")
	f.saving.register(cmd)
	fl.BoolVar(&f.sameClock, "same-clock", false, "with --mode wirebench: the server reads this machine's clock (a lab namespace on this host), so the latency test gives one-way latency; without it, only a loopback or own address counts as the same clock, and any other gives delay variation only")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON document (schema wirebench/1, kind rfc2544)")
	fl.BoolVar(&f.csv, "csv", false, "print the figures as CSV (test, size, point, metric, value)")
	return cmd
}

// parseRFC2544 builds the run's configuration from the flags.
func parseRFC2544(host string, f *rfc2544Flags) (rfc2544.Config, result.RFC2544Test, sweep.Runner, error) {
	var cfg rfc2544.Config
	test := result.RFC2544Test{Mode: f.mode, Host: host, Port: f.port, Strict: f.strict}
	m, err := linerate.LookupMedium(f.medium)
	if err != nil {
		return cfg, test, nil, usagef("invalid --medium %q: %v", f.medium, err)
	}
	test.Medium = m.Name
	if cfg.Sizes, err = sweep.ParseSizes(f.sizes, m); err != nil {
		return cfg, test, nil, usageError{err}
	}
	for _, t := range strings.Split(f.tests, ",") {
		if t = strings.TrimSpace(t); !slices.Contains(rfc2544.Tests, t) {
			return cfg, test, nil, usagef("invalid --tests %q: want some of %s", f.tests, strings.Join(rfc2544.Tests, ","))
		}
		cfg.Tests = append(cfg.Tests, t)
	}
	if cfg.PDRPercent, err = sweep.ParseLossPercent(f.pdr); err != nil || cfg.PDRPercent == 0 {
		return cfg, test, nil, usagef("invalid --pdr %q: want a share above 0 like 0.5%%", f.pdr)
	}
	for _, l := range strings.Split(f.loads, ",") {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(l), "%"), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return cfg, test, nil, usagef("invalid --loads %q: want percentages of the NDR above 0 up to 100, like 10,50,90,100", f.loads)
		}
		cfg.Loads = append(cfg.Loads, v)
	}
	if err := parseSchedule(f, &cfg); err != nil {
		return cfg, test, nil, err
	}
	if f.port < 1 || f.port > 65535 {
		return cfg, test, nil, usagef("invalid --port %d", f.port)
	}
	cfg.LinePPS = sweep.UDPLinePPS(m)
	var r sweep.Runner
	if f.sameClock && f.mode != sweep.ModeWirebench {
		return cfg, test, nil, usagef("--same-clock is for --mode wirebench, where the server times what arrives")
	}
	switch f.mode {
	case sweep.ModeReflect:
		r, cfg.Latency = sweep.ReflectRunner{Host: host, Port: f.port}, result.RFC2544RoundTrip
	case sweep.ModeWirebench:
		r, cfg.BacklogFloor = sweep.SessionRunner{Base: session.ClientConfig{Host: host, Port: f.port, Dialect: session.DialectIperf2}}, serverBacklogFloor
		shared, why := sameClock(context.Background(), host, f.sameClock)
		cfg.Latency, test.Clock = result.RFC2544DelayVariation, result.RFC2544ClockSeparate
		if shared {
			cfg.Latency, test.Clock = result.RFC2544OneWay, result.RFC2544ClockShared
		}
		test.ClockWhy = why
		cfg.LatencyMinSize = iperf2.MinDatagramForLatency
	case sweep.ModeIperf2:
		r, cfg.BacklogFloor = sweep.SessionRunner{Base: session.ClientConfig{Host: host, Port: f.port, Dialect: session.DialectIperf2}}, serverBacklogFloor
		cfg.NoLatency = "cannot run against an iperf 2 server: its report carries no per-datagram times; run it against a reflector (--mode reflect) for round-trip times"
	default:
		return cfg, test, nil, enumFlag("--mode", f.mode, sweep.Modes...)
	}
	return cfg, test, r, cfg.Validate()
}

// parseSchedule sets the trial lengths: the default or --strict schedule,
// with --trial, --confirm, --max-burst and --gap.
func parseSchedule(f *rfc2544Flags, cfg *rfc2544.Config) error {
	cfg.Schedule = rfc2544.DefaultSchedule()
	if f.strict {
		cfg.Schedule = rfc2544.StrictSchedule()
	}
	for _, d := range []struct {
		flag, val string
		to        *time.Duration
	}{{"--trial", f.trial, &cfg.Schedule.Search}, {"--confirm", f.confirm, &cfg.Schedule.Confirm}} {
		if d.val == "" {
			continue
		}
		v, err := parseDur(d.val)
		if err != nil || v <= 0 {
			return usagef("invalid %s %q: want a duration like 1s or 500ms", d.flag, d.val)
		}
		*d.to = v
	}
	if f.maxBurst < 2 || f.maxBurst > 10_000_000 {
		return usagef("invalid --max-burst %d: want 2 to 10000000 frames", f.maxBurst)
	}
	cfg.Schedule.MaxBurst = f.maxBurst
	cfg.Gap = 200 * time.Millisecond
	if f.mode == sweep.ModeIperf2 {
		cfg.Gap = time.Second
	}
	if f.gap != "" {
		v, err := parseDur(f.gap)
		if err != nil || v < 0 {
			return usagef("invalid --gap %q: want a duration like 200ms", f.gap)
		}
		cfg.Gap = v
	}
	return nil
}

func runRFC2544(e *env, _ *cobra.Command, host string, f *rfc2544Flags) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	cfg, test, r, err := parseRFC2544(host, f)
	if err != nil {
		return err
	}
	if err := f.saving.check(); err != nil {
		return err
	}
	defer f.saving.close()
	prog := newSweepProgress(e.stderr)
	cfg.OnProgress = func(p rfc2544.Progress) {
		prog.line(fmt.Sprintf("rfc2544: %s %d B, %s, about %v left", p.Test, p.Size, p.What, p.Left.Round(time.Second)))
	}
	res := rfc2544.NewResult(test)
	res.Version = version.String()
	runErr := rfc2544.Run(e.ctx, cfg, r, res)
	prog.done()
	// Saved before printing, so that a store that failed says so in the
	// JSON, and the printed document carries the run's id (check reads it).
	id, w := f.saving.save(e, result.KindRFC2544, net.JoinHostPort(host, strconv.Itoa(f.port)), report.RFC2544Summary(res), res.StartedAt, res)
	if w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	defer f.saving.announce(e, id, format)
	res.RunID = id
	switch format {
	case formatJSON:
		err = writeJSONDoc(e.stdout, res)
	case formatCSV:
		err = report.WriteRFC2544CSV(e.stdout, res)
	default:
		err = report.WriteRFC2544(e.stdout, res)
	}
	if err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("rfc2544: %w", runErr)
	}
	return nil
}
