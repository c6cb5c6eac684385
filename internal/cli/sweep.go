package cli

import (
	"fmt"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/version"
)

// sweepCmdFlags are the sweep command's flags as typed.
type sweepCmdFlags struct {
	port     int
	sizes    string
	mode     string
	loss     string
	trial    string
	confirm  string
	packets  int64
	maxRate  string
	repeat   int
	medium   string
	gap      string
	noBisect bool
	dialect  string
	json     bool
	csv      bool
	saving   saveFlags
	dut      dutFlags
}

func newSweepCmd(e *env) *cobra.Command {
	f := &sweepCmdFlags{}
	cmd := &cobra.Command{
		Use:   "sweep HOST",
		Short: "Find the fastest loss-free rate per packet size, and bisect rate cliffs to the byte",
		Long: `For each UDP payload size, search the highest rate the far end carries within
the loss criterion (RFC 2544 throughput, over ordinary sockets): start at the
medium's maximum packet rate (or --max-rate), jump below what the far end
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
	fl.IntVarP(&f.port, "port", "p", session.DefaultPort, "`PORT` of the far end")
	fl.StringVar(&f.sizes, "sizes", "rfc2544", "UDP payload sizes: a `LIST` like 64,512,1470, a range A-B[:STEP], or rfc2544")
	fl.StringVar(&f.mode, "mode", sweep.ModeWirebench, "the far end, a `MODE`: reflect, wirebench or iperf2")
	fl.StringVar(&f.loss, "loss", "0", "pass criterion: the most loss a trial may show, as a `PERCENT` like 0.1%")
	fl.StringVar(&f.trial, "trial", "1s", "length of each trial, a `DUR` like 2s or 500ms")
	fl.StringVar(&f.confirm, "confirm", "10s", "length of the trial that confirms each size's rate, a `DURATION` (RFC 2544: 60s; 0: as long as --trial)")
	fl.Int64Var(&f.packets, "packets", 0, "send `N` datagrams per trial instead of --trial (a modem's size sweep used 1,000,000)")
	fl.StringVar(&f.maxRate, "max-rate", "", "the highest rate to try, a `RATE` like 50M or 20000pps, tried as given even above the medium's maximum (default: the medium's maximum)")
	fl.IntVar(&f.repeat, "repeat", 1, "`N` searches per size; above 1 the table shows the mean and a 95 % confidence interval")
	fl.StringVar(&f.medium, "medium", "eth1g", "the medium `NAME`, for the starting rate and the % of line column (see wirebench calc)")
	fl.StringVar(&f.gap, "gap", "", "pause between trials so that queues drain, a `DUR` (default 200ms; 1s with --mode iperf2, whose 2.1.8 server misses a test that starts within about 0.3 s of the last one's end)")
	fl.StringVar(&f.dialect, "dialect", "", "our client's wire dialect `NAME` against a server (--mode wirebench or iperf2): iperf2, iperf2-legacy, iperf3 or auto "+
		"(default: iperf3 when -p 5201, else auto: a short TCP exchange tells an iperf3 server from iperf 2.1+; device dialects are never guessed)")
	fl.BoolVar(&f.noBisect, "no-bisect", false, "report cliffs between the sizes asked for, without bisecting to the byte")
	f.saving.register(cmd)
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON document (schema wirebench/1, kind sweep)")
	fl.BoolVar(&f.csv, "csv", false, "print the table as CSV")
	f.dut.register(cmd, false)
	return cmd
}

// sweepSetup is a sweep's configuration built from the flags.
type sweepSetup struct {
	cfg    sweep.Config
	test   result.SweepTest
	runner sweep.Runner
}

func parseSweep(host string, f *sweepCmdFlags) (*sweepSetup, error) {
	if err := f.dut.checkShell(); err != nil {
		return nil, err
	}
	m, err := linerate.LookupMedium(f.medium)
	if err != nil {
		return nil, usagef("invalid --medium %q: %v", f.medium, err)
	}
	sizes, err := sweep.ParseSizes(f.sizes, m)
	if err != nil {
		return nil, usageError{err}
	}
	loss, err := sweep.ParseLossPercent(f.loss)
	if err != nil {
		return nil, usagef("invalid --loss %q: want a share like 0, 0.1%% or 1%%", f.loss)
	}
	trial, err := parseDur(f.trial)
	if err != nil || trial <= 0 {
		return nil, usagef("invalid --trial %q: want a duration like 1s or 500ms", f.trial)
	}
	confirm, err := parseDur(f.confirm)
	if err != nil || confirm < 0 {
		return nil, usagef("invalid --confirm %q: want a duration like 10s or 60s, or 0 to confirm with a trial as long as the others", f.confirm)
	}
	gap := 200 * time.Millisecond
	if f.mode == sweep.ModeIperf2 {
		gap = time.Second
	}
	if f.gap != "" {
		if gap, err = parseDur(f.gap); err != nil || gap < 0 {
			return nil, usagef("invalid --gap %q: want a duration like 200ms", f.gap)
		}
	}
	if f.packets < 0 || f.packets == 1 {
		return nil, usagef("invalid --packets %d: want at least 2", f.packets)
	}
	if f.repeat < 1 || f.repeat > 100 {
		return nil, usagef("invalid --repeat %d: want 1 to 100", f.repeat)
	}
	if f.port < 1 || f.port > 65535 {
		return nil, usagef("invalid --port %d", f.port)
	}
	line := sweep.UDPLinePPS(m)
	maxPPS := line
	var maxRate units.Rate
	if f.maxRate != "" {
		if maxRate, err = units.ParseRate(f.maxRate); err != nil {
			return nil, usagef("invalid --max-rate: %v", err)
		}
		// A rate asked for is tried as asked, also above the medium's
		// maximum: a point that passes there is judged suspect (the path
		// is not the medium named), where capping it at the medium would
		// report a wrong --medium's line rate as the device's.
		maxPPS = func(size int) float64 {
			r := maxRate.Value
			if !maxRate.PPS {
				r /= float64(size * 8)
			}
			return r
		}
	}
	for _, s := range sizes {
		if line(s) <= 0 {
			return nil, usagef("size %d B: medium %s has no packet rate for it", s, m.Name)
		}
	}
	s := &sweepSetup{
		cfg: sweep.Config{Sizes: sizes, MaxPPS: maxPPS, LinePPS: line, LossPercent: loss, Trial: trial, Confirm: confirm,
			Packets: f.packets, Repeat: f.repeat, NoBisect: f.noBisect, Gap: gap},
		test: result.SweepTest{Mode: f.mode, Host: host, Port: f.port, Medium: m.Name, LossPercent: loss, ConfirmS: confirm.Seconds(),
			Packets: f.packets, MaxRate: f.maxRate, Repeat: f.repeat, Bisect: !f.noBisect, Sizes: sizes},
	}
	if f.packets > 0 {
		s.cfg.Trial = 0
	} else {
		s.test.TrialS = trial.Seconds()
	}
	switch f.mode {
	case sweep.ModeReflect:
		s.runner = sweep.ReflectRunner{Host: host, Port: f.port}
	case sweep.ModeWirebench, sweep.ModeIperf2:
		s.runner = sweep.SessionRunner{Base: session.ClientConfig{Host: host, Port: f.port, Dialect: session.DialectIperf2}}
		// The server's report times its receive window from its first
		// and last datagram: a few ms of scheduling at either end are
		// not a queue.
		s.cfg.BacklogFloor = serverBacklogFloor
	default:
		return nil, enumFlag("--mode", f.mode, sweep.Modes...)
	}
	return s, s.cfg.Validate()
}

// serverBacklogFloor is the least backlog that fails a trial against a
// server (its receive window's timing resolution); see
// sweep.Config.BacklogFloor.
const serverBacklogFloor = 20 * time.Millisecond

// parseDur is the one parser of time values given as text: plain seconds
// ("0.2", as ping -i and iperf -t take them) or a Go duration ("200ms",
// "1m30s"), from 0 up to a year.
func parseDur(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return seconds("duration", v)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > 365*24*time.Hour {
		return 0, fmt.Errorf("%q is not a time: want seconds (0.2) or a duration (200ms)", s)
	}
	return d, nil
}

func runSweep(e *env, cmd *cobra.Command, host string, f *sweepCmdFlags) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("packets") && cmd.Flags().Changed("trial") {
		return usagef("choose one of --trial and --packets")
	}
	s, err := parseSweep(host, f)
	if err != nil {
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
		if dev, err = f.dut.openSweepDUT(e, s, f.mode, f.packets); err != nil {
			return err
		}
	} else if err := f.chooseDialect(e, cmd, s, format); err != nil {
		return err
	}
	prog := newSweepProgress(e.stderr)
	s.cfg.OnTrial = prog.trial
	res := sweep.NewResult(s.test)
	res.Version = version.String()
	runErr := sweep.Run(e.ctx, s.cfg, s.runner, res)
	prog.done()
	if dev != nil {
		dev.finish(e, res)
	}
	// Saved before printing, so that a store that failed says so in the
	// JSON; an interrupted sweep is kept too (marked interrupted).
	id, w := f.saving.save(e, result.KindSweep, net.JoinHostPort(res.Test.Host, strconv.Itoa(res.Test.Port)), sweepSummary(res), res.StartedAt, res)
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
		err = writeSweepRun(e.stdout, res)
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
func (f *sweepCmdFlags) chooseDialect(e *env, cmd *cobra.Command, s *sweepSetup, format outputFormat) error {
	given := cmd.Flags().Changed("dialect")
	run, ok := s.runner.(sweep.SessionRunner)
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
	c := probe.ChooseDialect(e.ctx, s.test.Host, s.test.Port, f.dialect, given)
	if format == formatText {
		announceDialect(e, c)
	}
	run.Base.Dialect = c.Dialect
	s.runner = run
	s.test.DialectChosenBy, s.test.DialectReason = c.By, c.Reason
	if c.Dialect != session.DialectIperf2 {
		s.test.Dialect = c.Dialect
	}
	return nil
}

// sweepProgress shows where a sweep is: one live line on a terminal, a
// plain line per trial otherwise.
type sweepProgress struct {
	w    io.Writer
	live bool
}

func newSweepProgress(w io.Writer) *sweepProgress {
	p := &sweepProgress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.live = true
		}
	}
	return p
}

func (p *sweepProgress) trial(pr sweep.Progress) {
	what := fmt.Sprintf("sweep: %d B", pr.Size)
	if pr.Bisected {
		what += " (bisecting a cliff)"
	}
	if pr.Repeat > 1 {
		what += fmt.Sprintf(" repeat %d", pr.Repeat)
	}
	line := fmt.Sprintf("%s, trial %d at %.0f/s: %s (sent %d, loss %.3f %%)", what, pr.Trial, pr.RatePPS, pr.Verdict, pr.Outcome.Sent, sweep.LossPercent(pr.Outcome))
	if eta := pr.ETA(); eta > 0 {
		line += fmt.Sprintf(", about %v left", eta.Round(time.Second))
	}
	p.line(line)
}

// line shows one progress line.
func (p *sweepProgress) line(line string) {
	if p.live {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

// done clears the live line.
func (p *sweepProgress) done() {
	if p.live {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// sweepSummary is the one line history shows for a sweep.
func sweepSummary(r *result.Sweep) string {
	sum := fmt.Sprintf("sweep %s, %d sizes, %d cliffs", r.Test.Mode, len(r.Sizes), len(r.Cliffs))
	if r.Interrupted {
		sum += ", interrupted"
	}
	return sum
}
