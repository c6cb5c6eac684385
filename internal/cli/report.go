package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/report/htmlreport"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
)

// reportFlags are the report command's flags as typed.
type reportFlags struct {
	dbFlag
	out   string
	png   string
	title string
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
	fl.StringVarP(&f.out, "output", "o", "", "write the HTML report to `FILE` (required)")
	fl.StringVar(&f.png, "png", "", "also write each chart as a PNG file into `DIR`")
	fl.StringVar(&f.title, "title", "wirebench report", "the report's title")
	f.dbFlag.register(cmd)
	return cmd
}

func runReport(e *env, files []string, f *reportFlags) error {
	if f.out == "" {
		return usagef("-o FILE is required: where to write the HTML report")
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
		label := filepath.Base(name)
		var run string
		var labels map[string]string
		sel, serr := store.ParseSelector(name)
		if errors.Is(err, fs.ErrNotExist) && serr == nil {
			// Not a file, and it reads as a run id or labels: a run in
			// the results store.
			if st == nil {
				if st, err = f.open(e.ctx); err != nil {
					return err
				}
			}
			r, ferr := store.Find(e.ctx, st, sel)
			if ferr != nil {
				return ferr
			}
			b, err = r.Result, nil
			run, labels = fmt.Sprintf("run %d", r.ID), r.Labels
			label = run
			if lbl := result.FormatLabels(r.Labels); lbl != "" {
				label += " (" + lbl + ")"
			}
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		d, err := htmlreport.Decode(label, b)
		if err != nil {
			return err
		}
		d.Run, d.Labels = run, labels
		docs = append(docs, d)
	}
	r, err := htmlreport.Build(f.title, docs)
	if err != nil {
		return fmt.Errorf("building the report: %w", err)
	}
	if err := r.WriteFile(f.out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "report: %s (%d documents, %d charts)\n", f.out, len(docs), len(r.Charts()))
	if f.png != "" {
		paths, err := r.WritePNGs(f.png)
		if err != nil {
			return err
		}
		for _, p := range paths {
			fmt.Fprintf(e.stdout, "chart: %s\n", p)
		}
	}
	return nil
}
