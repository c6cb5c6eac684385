package cli

import (
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/version"
)

// sweepCmdFlags are the sweep command's flags as typed.
type sweepCmdFlags struct {
	sweep.Options
	dialect   string
	json, csv bool
	saving    saveFlags
	dut       dutFlags
}

func newSweepCmd(e *env) *cobra.Command {
	f := &sweepCmdFlags{}
	cmd := &cobra.Command{
		Use:   "sweep HOST",
		Short: "Find the fastest loss-free rate per packet size, and bisect rate cliffs to the byte",
		Long: `For each UDP payload size, search the highest rate the far end carries within
the loss criterion (RFC 2544 throughput, over ordinary sockets): start at the
medium's maximum packet rate (or --max-rate; a survey first runs that trial
for every size, so that cliffs show at once), jump below what the far end
delivered when a trial loses, bisect, and confirm the rate with one longer
trial (--confirm, 10 s; RFC 2544 uses 60 s): a rate that does not hold for it
is not reported, and the search goes on below it. A trial passes only when its
loss is within --loss, the far end kept pace (its queue grew by at most 0.5 %
of the trial: its receive window was at most that much longer than our send
window), and this host really offered the rate asked for; a size this host
could not send fast enough is marked "limited by this host", never reported as
the device's figure. The rate shown is what the far end delivered in the
confirming trial (its count over its own receive window), not what we offered,
and the table says which trial length it held for.

Where the byte rate falls between neighbouring sizes (it should rise with
size), the sizes in between are searched down to the byte, and the cliff gets
a hint (e.g. a receive buffer that holds two datagrams below it, one above).

The far end (--mode):
  reflect    a UDP reflector (wirebench reflect, a device in loopback): what comes back is counted, with its RTT
  wirebench  a wirebench server: the receive counts come from its report (default)
  iperf2     an iperf 2 server (iperf -s -u, a device's): its server report gives the counts

Sizes (--sizes): a list (64,512,1470), a range A-B[:STEP], or rfc2544 (frame
sizes 64…1518 turned into UDP payloads for --medium). The JSON document has the
schema wirebench/1, kind "sweep" (docs/sweep.md). A first Ctrl-C stops after
the trial under way and prints the sizes finished.

With --dut SPEC the device is the receiver, driven through its own shell
(docs/dut.md): before every trial its server is started (zperf udp download,
iperf -s -u, ...), our client sends the trial, and the device's own report is
parsed into the trial ("device" in the JSON, per trial and per size). The loss
is judged on the server's report to our client when one comes back, else on
the device's own packet and loss counts ("counted_by"). The text output adds a
table of the device's figures beside ours. A device that fails mid-sweep ends it
with its error; the sizes finished are printed and saved, and the exit code is 1.`,
		Example: `  wirebench sweep 192.0.2.1 --sizes rfc2544 --medium eth100
  wirebench sweep 127.0.0.1 --mode reflect --sizes 1200,1250,1300,1400 --max-rate 20000pps
  wirebench sweep 192.0.2.1 --mode iperf2 --sizes 64-1472:64 --packets 100000 --loss 0.1% --confirm 60s
  wirebench sweep 192.0.2.1 --sizes 512,1470 --repeat 3 --json
  wirebench sweep 192.0.2.1 --sizes 64,512,1470 --max-rate 100M --dut serial:/dev/ttyACM0 --dut-shell zephyr`,
		Args: exactArgs(1, "one HOST"),
		RunE: func(cmd *cobra.Command, args []string) error { return runSweep(e, cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.Port, "port", "p", session.DefaultPort, "`PORT` of the far end")
	fl.StringVar(&f.Sizes, "sizes", "rfc2544", "UDP payload sizes: a `LIST` like 64,512,1470, a range A-B[:STEP], or rfc2544")
	fl.StringVar(&f.Mode, "mode", sweep.ModeWirebench, "the far end, a `MODE`: reflect, wirebench or iperf2")
	fl.StringVar(&f.Loss, "loss", "0", "pass criterion: the most loss a trial may show, as a `PERCENT` like 0.1%")
	fl.StringVar(&f.Trial, "trial", "1s", "length of each trial, a `DUR` like 2s or 500ms")
	fl.StringVar(&f.Confirm, "confirm", "10s", "length of the trial that confirms each size's rate, a `DURATION` (RFC 2544: 60s; 0: as long as --trial)")
	fl.Int64Var(&f.Packets, "packets", 0, "send `N` datagrams per trial instead of --trial (a modem's size sweep used 1,000,000)")
	fl.StringVar(&f.MaxRate, "max-rate", "", "the highest rate to try, a `RATE` like 50M or 20000pps, tried as given even above the medium's maximum (default: the medium's maximum)")
	fl.IntVar(&f.Repeat, "repeat", 1, "`N` searches per size; above 1 the table shows the mean and a 95 % confidence interval")
	fl.StringVar(&f.Medium, "medium", "eth1g", "the medium `NAME`, for the starting rate and the % of line column (see wirebench calc)")
	fl.StringVar(&f.Gap, "gap", "", "pause between trials so that queues drain, a `DUR` (default 200ms; 50ms with --mode reflect, whose trials listen until the answers stop; 1s with --mode iperf2, whose 2.1.8 server misses a test that starts within about 0.3 s of the last one's end)")
	fl.StringVar(&f.dialect, "dialect", "", "our client's wire dialect `NAME` against a server (--mode wirebench or iperf2): iperf2, iperf2-legacy, iperf3 or auto "+
		"(default: iperf2 on port 5001, iperf3 on 5201, else auto: a short TCP exchange tells an iperf3 server from iperf 2.1+; device dialects are never guessed)")
	fl.BoolVar(&f.NoBisect, "no-bisect", false, "report cliffs between the sizes asked for, without bisecting to the byte")
	fl.BoolVarP(&f.Verbose, "verbose", "V", false, "under each warning, list what it sums up: each size's and each spoiled trial's own words")
	f.saving.register(cmd)
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON document (schema wirebench/1, kind sweep)")
	fl.BoolVar(&f.csv, "csv", false, "print the table as CSV")
	f.dut.register(cmd, false)
	return cmd
}

func runSweep(e *env, cmd *cobra.Command, host string, f *sweepCmdFlags) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("packets") && cmd.Flags().Changed("trial") {
		return usagef("choose one of --trial and --packets")
	}
	if err := f.dut.checkShell(); err != nil {
		return err
	}
	s, err := f.Setup(host)
	if err != nil {
		return usageError{err}
	}
	if err := s.Config.Validate(); err != nil {
		return err
	}
	if err := f.saving.check(); err != nil {
		return err
	}
	defer f.saving.close()
	var dev *sweepDUT
	if f.dut.enabled() {
		if cmd.Flags().Changed("dialect") {
			return usagef("--dialect cannot be combined with --dut: the device's shell says which dialect its server needs")
		}
		if dev, err = f.dut.openSweepDUT(e, s, f.Options); err != nil {
			return err
		}
	} else if err := f.chooseDialect(e, cmd, s, format); err != nil {
		return err
	}
	prog := report.NewProgress(e.stderr)
	s.Config.OnTrial = func(p sweep.Progress) { prog.Line(p.Line()) }
	res := sweep.NewResult(s.Test)
	res.Version = version.String()
	runErr := sweep.Run(e.ctx, s.Config, s.Runner, res)
	prog.Done()
	if dev != nil {
		dev.finish(e, res)
	}
	// Saved before printing, so that a store that failed says so in the
	// JSON; an interrupted sweep is kept too (marked interrupted).
	id, w := f.saving.save(e, result.KindSweep, net.JoinHostPort(res.Test.Host, strconv.Itoa(res.Test.Port)), sweep.Summary(res), res.StartedAt, res)
	if w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	defer f.saving.announce(e, id, format)
	res.RunID = id
	switch format {
	case formatJSON:
		err = writeJSONDoc(e.stdout, res)
	case formatCSV:
		err = report.WriteSweepCSV(e.stdout, res)
	default:
		err = writeSweepRun(e.stdout, res, f.Verbose)
	}
	if err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("sweep: %w", runErr)
	}
	return nil
}

// chooseDialect settles the dialect of a sweep against a server (see
// chooseDialect) and puts it in the runner and the test description.
func (f *sweepCmdFlags) chooseDialect(e *env, cmd *cobra.Command, s *sweep.Setup, format outputFormat) error {
	given := cmd.Flags().Changed("dialect")
	run, ok := s.Runner.(sweep.SessionRunner)
	if !ok {
		if given {
			return usagef("--dialect is for a sweep against a server (--mode wirebench or iperf2); a reflector has no dialect")
		}
		return nil
	}
	switch f.dialect {
	case session.DialectIperf2, session.DialectIperf2Legacy, session.DialectIperf3, probe.DialectAuto:
	case "":
		if given {
			return usagef("invalid --dialect \"\": want iperf2, iperf2-legacy, iperf3 or auto")
		}
	default:
		return usagef("invalid --dialect %q: want iperf2, iperf2-legacy, iperf3 or auto (a sweep needs the server's report: raw brings none)", f.dialect)
	}
	c := probe.ChooseDialect(e.ctx, s.Test.Host, s.Test.Port, f.dialect, given, e.logf)
	if format == formatText {
		announceDialect(e, c)
	}
	run.Base.Dialect = c.Dialect
	s.Runner = run
	s.Test.DialectChosenBy, s.Test.DialectReason = c.By, c.Reason
	if c.Dialect != session.DialectIperf2 {
		s.Test.Dialect = c.Dialect
	}
	return nil
}
