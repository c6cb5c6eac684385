package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/report/htmlreport"
	"github.com/wirebench/wirebench/internal/store"
)

// reportFlags are the report command's flags as typed.
type reportFlags struct {
	dbFlag
	htmlreport.Options
}

func newReportCmd(e *env) *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report FILE.json|RUN...",
		Short: "Render results (JSON files or saved runs) as one self-contained HTML report with charts (and PNGs)",
		Long: `Read JSON documents written by wirebench --json (client and server tests, matrix,
sweep, ping, latency, latency under load), or runs from the results store (RUN: a
run id from history, or labels like device=pic32,link=usb meaning the newest
run carrying them; an argument that names an existing file is the file), and
write one HTML file that opens with no network: inline CSS, charts as inline
SVG, no scripts, fonts or links.

It shows throughput over time, matrix tables and bars, sweep curves against the
theoretical limit, RTT distributions, a comparison of the documents when there
are several, each document's warnings, and every number of every document in
tables. --png DIR also writes each chart as a PNG file (docs/report.md).`,
		Example: `  wirebench matrix 192.0.2.1 -b 100M --medium eth100 --json > matrix.json
  wirebench report matrix.json -o report.html
  wirebench report before.json after.json -o compare.html --png charts/
  wirebench report link=eth link=usb -o eth-vs-usb.html     # the newest saved run of each`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("give at least one JSON file written by wirebench --json, or a saved RUN")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(e, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.Out, "output", "o", "", "write the HTML report to `FILE` (required)")
	fl.StringVar(&f.PNG, "png", "", "also write each chart as a PNG file into `DIR`")
	fl.StringVar(&f.Title, "title", "wirebench report", "the report's title")
	f.dbFlag.register(cmd)
	return cmd
}

func runReport(e *env, files []string, f *reportFlags) error {
	if err := f.Check(); err != nil {
		return usageError{err}
	}
	docs := make([]htmlreport.Document, 0, len(files))
	var st store.Store
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	for _, name := range files {
		b, err := os.ReadFile(name)
		sel, serr := store.ParseSelector(name)
		if errors.Is(err, fs.ErrNotExist) && serr == nil {
			// Not a file, and it reads as a run id or labels: a run in
			// the results store.
			if st == nil {
				if st, err = f.open(e.ctx); err != nil {
					return err
				}
			}
			r, err := store.Find(e.ctx, st, sel)
			if err != nil {
				return err
			}
			d, err := htmlreport.DecodeRun(r)
			if err != nil {
				return err
			}
			docs = append(docs, d)
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		d, err := htmlreport.Decode(filepath.Base(name), b)
		if err != nil {
			return err
		}
		docs = append(docs, d)
	}
	return f.Write(e.stdout, docs)
}
