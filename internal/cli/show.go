package cli

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
)

type showFlags struct {
	dbFlag
	json       bool
	transcript bool
}

func newShowCmd(e *env) *cobra.Command {
	f := &showFlags{}
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Print one saved run in full: labels, configuration, host, every interval and the summary",
		Long: `Print one saved run in full: its record (kind, times, labels, host, the
command line), then its result as the command that made it printed it (a
test's intervals and summary, a latency or ping summary, the matrix or
sweep table). RUN is a run id (from wirebench history) or labels
such as device=pic32,link=usb, meaning the newest run carrying them all
(add kind=test to pick a kind). --json prints the saved record: labels,
configuration, host facts and the whole result document as it was printed.
--transcript prints only the sessions with the device's own shell that a
--dut run kept (every one, for a matrix or a sweep), timestamped, both
directions.`,
		Example: `  wirebench show 42
  wirebench show device=pic32,link=usb
  wirebench show 42 --json | jq .result.receiver
  wirebench show device=zephyr,kind=matrix --transcript`,
		Args: exactArgs(1, "one RUN (an id or labels like device=pic32)"),
		RunE: func(cmd *cobra.Command, args []string) error { return runShow(e, f, args[0]) },
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print the saved run as one JSON document (kind run)")
	cmd.Flags().BoolVar(&f.transcript, "transcript", false, "print only the device shell transcripts the run kept (runs made with --dut)")
	cmd.MarkFlagsMutuallyExclusive("json", "transcript")
	f.dbFlag.register(cmd)
	return cmd
}

func runShow(e *env, f *showFlags, arg string) error {
	sel, err := store.ParseSelector(arg)
	if err != nil {
		return usageError{err}
	}
	st, err := f.open(e.ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := store.Find(e.ctx, st, sel)
	if err != nil {
		return err
	}
	if f.transcript {
		return report.WriteTranscripts(e.stdout, r)
	}
	if f.json {
		return writeJSONDoc(e.stdout, result.RunDoc{Schema: result.Schema, Kind: result.KindRun, Run: r})
	}
	if err := report.WriteRunRecord(e.stdout, r); err != nil {
		return err
	}
	cfg, _ := r.Command()
	return writeRunResult(e.stdout, r, cfg)
}

// writeRunResult prints a saved result document as the command that
// made it printed it (report.WriteSavedResult), matrix and sweep runs
// with their device reports.
func writeRunResult(w io.Writer, r *store.Run, cfg result.RunConfig) error {
	return report.WriteSavedResult(w, r, cfg, report.SavedRenderers{Matrix: writeMatrixRun, Sweep: func(w io.Writer, s *result.Sweep) error { return writeSweepRun(w, s, false) }})
}

// writeMatrixRun prints a matrix as the matrix command did: the table,
// then each cell's device report (runs made with --dut).
func writeMatrixRun(w io.Writer, m *result.Matrix) error {
	if err := report.WriteMatrix(w, m); err != nil {
		return err
	}
	return report.WriteMatrixDevice(w, m)
}

// writeSweepRun prints a sweep as the sweep command did: the table, then
// the device's report (runs made with --dut); verbose is -V's detail.
func writeSweepRun(w io.Writer, s *result.Sweep, verbose bool) error {
	if err := report.WriteSweepText(w, s, verbose); err != nil {
		return err
	}
	return writeSweepDevice(w, s)
}
