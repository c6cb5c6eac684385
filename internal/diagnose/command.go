package diagnose

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/version"
)

// NewCommand is `wirebench diagnose HOST`. It is built here rather than in
// internal/cli, which only adds it to its table: usage wraps an error in
// what the user typed (the cli's exit code 2). The command's context,
// standard output and error are the root command's.
func NewCommand(usage func(error) error) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "diagnose HOST",
		Short: "Say what limits a link or device, in one paragraph with its evidence",
		Long: `Run a planned, bounded series of short UDP runs against HOST and reason out
what limits it, as an engineer would by hand: a frame-rate limit (the frame
rate is flat across sizes) or a byte-rate limit (the bit rate is flat), or
both with the size where one hands over to the other; a timer tick (frames in
bursts at a fixed period); a size cliff (a buffer boundary, to the byte) or a
size limit (datagrams above N bytes never arrive); a loss floor (loss that
does not fall with the rate); the queue in front of the limit; or the medium
(--medium) or this host as the limit. Each finding has its figures, a
confidence and the runs that are its evidence; what the runs cannot tell apart
is said as such.

The plan: a load run per size (--sizes), the largest first, above what the far
end delivers; a few datagrams of --big-size, bisected to the byte when they
never arrive; the sizes between a cliff's two sides, bisected to the byte; a
long run well under the limit for the loss floor. It stops at --budget, and a
first Ctrl-C stops after the run under way: either way the findings reached
are printed. The far end (--mode) is as for sweep: reflect, wirebench or
iperf2. The JSON document has the schema wirebench/1, kind "diagnosis"
(docs/diagnose.md); it is saved with the label diagnose=ID.

With --dut SPEC the far end is a device driven through its own shell, as
sweep --dut drives it (docs/dut.md): every UDP run and the TCP run start the
device's server through its shell (zperf udp download, iperf -s -u, ...),
and the download run has the device's client send to our server at
--dut-peer. A shell times no round trips nor arrivals: the queue and a tick
cannot be told, and the diagnosis says so.`,
		Example: `  wirebench diagnose 127.0.0.1 -p 5001 --mode reflect --medium eth100
  wirebench diagnose 192.0.2.1 --sizes 64,512,1024,1470 --budget 5m --json
  wirebench diagnose 192.0.2.1 --dut serial:/dev/ttyACM0 --dut-shell zephyr --dut-peer 192.0.2.10`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usage(fmt.Errorf("expected one HOST, got %s", units.Plural(len(args), "argument")))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.Setup(args[0])
			if err != nil {
				return usage(err)
			}
			return Main(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), s, *o)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&o.Port, "port", "p", session.DefaultPort, "`PORT` of the far end")
	fl.StringVar(&o.Mode, "mode", sweep.ModeWirebench, "the far end, a `MODE`: reflect, wirebench or iperf2")
	fl.StringVar(&o.Medium, "medium", "eth1g", "the medium `NAME`: line rates, and \"the medium is the limit\" (see wirebench calc)")
	fl.StringVar(&o.Sizes, "sizes", DefaultSizes, "the first pass's UDP payload sizes, a `LIST` like 64,512,1470 or a range A-B[:STEP]")
	fl.StringVar(&o.MaxRate, "max-rate", DefaultMaxRate, "the highest `RATE` to ask of our sender, like 20000pps or 100M")
	fl.StringVar(&o.Trial, "trial", DefaultTrial, "length of a load run, a `DUR`")
	fl.StringVar(&o.LowRate, "low-rate", DefaultLowRate, "least length of the low-rate run that tells a loss floor, a `DUR` (0: none)")
	fl.StringVar(&o.Budget, "budget", DefaultBudget, "the most time the diagnosis takes, a `DUR` (0: no bound)")
	fl.StringVar(&o.Gap, "gap", "", "pause between runs so that queues drain, a `DUR` (default 200ms; 50ms with --mode reflect; 1s with --mode iperf2)")
	fl.IntVar(&o.BigSize, "big-size", DefaultBigSize, "`BYTES` of the datagrams checked for arriving at all (0: no size check)")
	fl.BoolVar(&o.JSON, "json", false, "print the diagnosis as one JSON document (schema wirebench/1, kind diagnosis)")
	fl.BoolVar(&o.CSV, "csv", false, "print the findings as CSV, one row per figure")
	fl.BoolVar(&o.NoSave, "no-save", false, "do not save the diagnosis in the results store")
	fl.StringArrayVar(&o.Labels, "label", nil, "label the saved diagnosis with `LABEL`, key=value (repeatable)")
	fl.StringVar(&o.DB, "db", "", "results store `URL` (as for every saved run; docs/store.md)")
	o.DUT.Register(fl, false)
	o.DUT.RegisterPeer(fl, "our address `ADDR` the device sends to in the download run (default: the source address of the route to the telnet host; needed for serial and cmd)")
	return cmd
}

// Main runs the diagnosis s and prints it to stdout, the progress to
// stderr; it saves it unless o.NoSave.
func Main(ctx context.Context, stdout, stderr io.Writer, s *Setup, o Options) error {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	if err := s.OpenDevice(ctx, logf); err != nil {
		return err
	}
	prog := report.NewProgress(stderr)
	s.Config.OnRun = func(p Progress) { prog.Line(p.Line()) }
	doc := NewResult(s.Test)
	doc.Version = version.String()
	id := doc.StartedAt.Format("20060102T150405Z")
	doc.Test.LabelKey = "diagnose=" + id
	if !o.NoSave {
		s.Config.Results = map[int]*result.Result{}
	}
	runErr := Run(ctx, s.Config, s.Runner, doc)
	prog.Done()
	s.closeDevice(doc, func(format string, args ...any) { fmt.Fprintf(stderr, "warning: "+format+"\n", args...) })
	if !o.NoSave {
		save(ctx, stderr, s, o, doc)
	}
	var err error
	switch {
	case o.JSON:
		var b []byte
		if b, err = json.MarshalIndent(doc, "", "  "); err == nil {
			_, err = stdout.Write(append(b, '\n'))
		}
	case o.CSV:
		err = report.WriteDiagnosisCSV(stdout, doc)
	default:
		err = report.WriteDiagnosis(stdout, doc)
	}
	if err != nil {
		return fmt.Errorf("printing the diagnosis: %w", err)
	}
	if doc.RunID > 0 && !o.JSON {
		fmt.Fprintf(stderr, "saved as run %d (label %s)\n", doc.RunID, doc.Test.LabelKey)
	}
	if runErr != nil {
		return fmt.Errorf("diagnose: %w", runErr)
	}
	return nil
}

// save keeps each run of doc as its own test, then doc, all labelled
// diagnose=ID (and the user's labels).
func save(ctx context.Context, stderr io.Writer, s *Setup, o Options, doc *result.Diagnosis) {
	saver := &store.Saver{URL: o.DB, Labels: append([]string{doc.Test.LabelKey}, o.Labels...),
		Warn: func(w string) { fmt.Fprintf(stderr, "warning: %s\n", w) }}
	defer saver.Close()
	saveCtx := context.WithoutCancel(ctx) // each save is bounded by store.SaveTimeout
	target := net.JoinHostPort(s.Test.Host, strconv.Itoa(s.Test.Port))
	if w := saveRuns(saveCtx, saver, target, s.Config, doc, s.Config.Results); w != "" {
		doc.Warnings = append(doc.Warnings, w)
		return // the diagnosis would fail the same way
	}
	rid, w := saver.Save(saveCtx, result.KindDiagnosis, target, summary(doc), doc.StartedAt, doc)
	doc.RunID = rid
	if w != "" {
		doc.Warnings = append(doc.Warnings, w)
	}
}

// summary is the one line the store lists the diagnosis by.
func summary(d *result.Diagnosis) string {
	kinds := ""
	for i, f := range d.Findings {
		if i > 0 {
			kinds += ", "
		}
		kinds += f.Kind
	}
	if kinds == "" {
		kinds = "no finding"
	}
	return fmt.Sprintf("diagnosis: %s (%d runs, %s)", kinds, len(d.Runs), (time.Duration(d.Seconds) * time.Second).String())
}
