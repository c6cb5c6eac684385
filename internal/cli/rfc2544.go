package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/labctl"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/version"
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
	verbose  bool
	// sameClock is --same-clock; sameClockSet says it was given (as
	// false, it turns off finding the clock shared).
	sameClock    bool
	sameClockSet bool
	saving       saveFlags
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

Trials: 1 s search trials confirmed by a 5 s one (the NDR's is its 100 %
latency point), 1 s latency trials and loss steps, one back-to-back search
(--trial, --confirm change the first two). --strict: RFC 2544's 60 s trials,
20 latency trials of 120 s per load, 50 back-to-back searches (many hours).

The far end (--mode): reflect (a UDP reflector: wirebench reflect, a device in
loopback), wirebench (a wirebench server) or iperf2 (an iperf 2 server). The
latency test needs a reflector or a wirebench server, which times each
datagram's arrival (kernel timestamp) against our send stamp: one-way latency
when the server reads this machine's clock (loopback, an address of this
machine or of one of its lab namespaces, found by itself; or --same-clock),
else delay variation only (each trial's
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
	fl.StringVar(&f.confirm, "confirm", "", "length of the trial that confirms a rate, a `DUR` (default 5s; 60s with --strict)")
	fl.Int64Var(&f.maxBurst, "max-burst", 100000, "the longest back-to-back burst to try, in `FRAMES`")
	fl.StringVar(&f.gap, "gap", "", "pause between trials so that queues drain, a `DUR` (default 200ms; 50ms with --mode reflect; 1s with --mode iperf2)")
	f.saving.register(cmd)
	fl.BoolVar(&f.sameClock, "same-clock", false, "with --mode wirebench: the server reads this machine's clock, so the latency test gives one-way latency; without it, loopback, this machine's own addresses and its lab namespaces are found to, and any other address gives delay variation only; --same-clock=false counts none")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON document (schema wirebench/1, kind rfc2544)")
	fl.BoolVar(&f.csv, "csv", false, "print the figures as CSV (test, size, point, metric, value)")
	fl.BoolVarP(&f.verbose, "verbose", "V", false, "under each warning, list what it sums up: each size's and each spoiled trial's own words")
	return cmd
}

// parseRFC2544 builds the run's configuration from the flags.
func parseRFC2544(host string, f *rfc2544Flags) (rfc2544.Config, result.RFC2544Test, sweep.Runner, error) {
	o := rfc2544.Options{Port: f.port, Mode: f.mode, Sizes: f.sizes, Tests: f.tests, Medium: f.medium, PDR: f.pdr, Loads: f.loads,
		Strict: f.strict, Trial: f.trial, Confirm: f.confirm, MaxBurst: f.maxBurst, Gap: f.gap, SameClock: f.sameClock}
	s, err := o.Setup(host, func(host string, told bool) (bool, string) {
		return labctl.SameClock(context.Background(), host, f.sameClockSet, told)
	})
	if err != nil {
		return rfc2544.Config{}, result.RFC2544Test{}, nil, usageError{err}
	}
	return s.Config, s.Test, s.Runner, s.Config.Validate()
}

func runRFC2544(e *env, cmd *cobra.Command, host string, f *rfc2544Flags) error {
	f.sameClockSet = cmd.Flags().Changed("same-clock")
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
	prog := report.NewProgress(e.stderr)
	cfg.OnProgress = func(p rfc2544.Progress) { prog.Line(p.Line()) }
	res := rfc2544.NewResult(test)
	res.Version = version.String()
	runErr := rfc2544.Run(e.ctx, cfg, r, res)
	prog.Done()
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
		err = report.WriteRFC2544(e.stdout, res, f.verbose)
	}
	if err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("rfc2544: %w", runErr)
	}
	return nil
}
