package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
	"github.com/wirebench/wirebench/internal/units"
)

// historyKinds are the kinds of run the results store holds, the values
// of history --kind: a typo is a usage error, not an empty list.
var historyKinds = store.Kinds

type historyFlags struct {
	dbFlag
	store.Query
	json, csv bool
}

func newHistoryCmd(e *env) *cobra.Command {
	f := &historyFlags{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List saved runs, filtered by label, age and kind",
		Long: `List the runs in the results store, oldest first: id, start time (UTC), kind,
target, labels and a one-line summary. Every client and server test, ping and
latency run is saved unless run with --no-save (docs/store.md).`,
		Example: `  wirebench history
  wirebench history --label device=pic32 --label link=usb --since 7d
  wirebench history --kind test --since 24h --csv > runs.csv
  wirebench history --db postgres://lab@db.example/wirebench --json
  wirebench history --prune --older-than 90d --keep 10000`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error { return runHistory(e, f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.Labels, "label", nil, "only runs with `LABEL`, key=value (repeatable: all must match)")
	fl.StringVar(&f.Since, "since", "", "only runs started in the last `DUR` (30m, 24h, 7d, 2w) or since a date (2026-11-30, RFC 3339)")
	fl.StringVar(&f.Kind, "kind", "", "only runs of this `KIND`: "+strings.Join(historyKinds, ", "))
	fl.IntVarP(&f.Limit, "limit", "n", 0, "only the newest `N` runs (0 = all)")
	fl.BoolVar(&f.json, "json", false, "print one JSON document (kind history)")
	fl.BoolVar(&f.csv, "csv", false, "print CSV: id, started_at, kind, target, labels, summary, version")
	fl.BoolVar(&f.Prune, "prune", false, "delete, of the runs --label and --kind select, those older than --older-than and those beyond the newest --keep")
	fl.StringVar(&f.OlderThan, "older-than", "", "with --prune: runs started more than `DUR` ago (90d) or before a date")
	fl.IntVar(&f.Keep, "keep", 0, "with --prune: keep the newest `N` runs")
	f.dbFlag.register(cmd)
	return cmd
}

func runHistory(e *env, f *historyFlags) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	filter, err := f.Filter(time.Now())
	var prune store.Prune
	if err == nil && f.Prune {
		prune, err = f.PruneRule(time.Now())
	}
	if err != nil {
		return usageError{err}
	}
	st, err := f.open(e.ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if f.Prune {
		n, err := st.Prune(e.ctx, prune)
		fmt.Fprintf(e.stdout, "pruned %s from %s\n", units.Plural(n, "run"), st.Location())
		return err
	}
	runs, err := st.List(e.ctx, filter)
	if err != nil {
		return err
	}
	switch format {
	case formatJSON:
		if runs == nil {
			runs = []store.Run{}
		}
		return writeJSONDoc(e.stdout, result.History{Schema: result.Schema, Kind: result.KindHistory, Store: st.Location(), Runs: runs})
	case formatCSV:
		return report.WriteHistoryCSV(e.stdout, runs)
	}
	return report.WriteHistory(e.stdout, runs, st.Location())
}
