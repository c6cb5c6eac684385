package cli

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
)

// historyKinds are the kinds of run the results store holds, the values
// of history --kind: a typo is a usage error, not an empty list.
var historyKinds = []string{store.KindTest, store.KindPing, store.KindLatency, result.KindUnderLoad, store.KindMatrix, store.KindSweep, store.KindRFC2544}

// KindHistory is the "kind" of the history command's JSON document.
const KindHistory = "history"

type historyFlags struct {
	dbFlag
	labels    []string
	since     string
	kind      string
	limit     int
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
  wirebench history --db postgres://lab@db.example/wirebench --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error { return runHistory(e, f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.labels, "label", nil, "only runs with `LABEL`, key=value (repeatable: all must match)")
	fl.StringVar(&f.since, "since", "", "only runs started in the last `DUR` (30m, 24h, 7d, 2w) or since a date (2026-11-30, RFC 3339)")
	fl.StringVar(&f.kind, "kind", "", "only runs of this `KIND`: "+strings.Join(historyKinds, ", "))
	fl.IntVarP(&f.limit, "limit", "n", 0, "only the newest `N` runs (0 = all)")
	fl.BoolVar(&f.json, "json", false, "print one JSON document (kind history)")
	fl.BoolVar(&f.csv, "csv", false, "print CSV: id, started_at, kind, target, labels, summary, version")
	f.dbFlag.register(cmd)
	return cmd
}

// parseSince turns --since into a time: a duration back from now (with d
// and w for days and weeks), or a date.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	mult := time.Duration(0)
	switch {
	case strings.HasSuffix(s, "d"):
		mult = 24 * time.Hour
	case strings.HasSuffix(s, "w"):
		mult = 7 * 24 * time.Hour
	}
	var d time.Duration
	if mult != 0 {
		n, err := strconv.ParseFloat(strings.TrimSpace(s[:len(s)-1]), 64)
		if err != nil || n < 0 || n > 1e5 {
			return time.Time{}, usagef("invalid --since %q: want a duration like 24h, 7d, 2w or a date like 2026-11-30", s)
		}
		d = time.Duration(n * float64(mult))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d < 0 {
			return time.Time{}, usagef("invalid --since %q: want a duration like 24h, 7d, 2w or a date like 2026-11-30", s)
		}
	}
	return now.Add(-d), nil
}

func runHistory(e *env, f *historyFlags) error {
	format, err := pickFormat(f.json, f.csv)
	if err != nil {
		return err
	}
	labels, err := store.ParseLabels(f.labels)
	if err != nil {
		return usageError{err}
	}
	since, err := parseSince(f.since, time.Now())
	if err != nil {
		return err
	}
	if f.limit < 0 {
		return usagef("invalid --limit %d", f.limit)
	}
	if f.kind != "" {
		if err := enumFlag("--kind", f.kind, historyKinds...); err != nil {
			return err
		}
	}
	st, err := f.open(e.ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := st.List(e.ctx, store.Filter{Labels: labels, Since: since, Kind: f.kind, Limit: f.limit})
	if err != nil {
		return err
	}
	switch format {
	case formatJSON:
		if runs == nil {
			runs = []store.Run{}
		}
		return writeJSONDoc(e.stdout, struct {
			Schema string      `json:"schema"`
			Kind   string      `json:"kind"`
			Store  string      `json:"store"`
			Runs   []store.Run `json:"runs"`
		}{result.Schema, KindHistory, st.Location(), runs})
	case formatCSV:
		w := csv.NewWriter(e.stdout)
		_ = w.Write([]string{"id", "started_at", "kind", "target", "labels", "summary", "version"})
		for _, r := range runs {
			_ = w.Write([]string{strconv.FormatInt(r.ID, 10), r.StartedAt.Format(time.RFC3339Nano), r.Kind, r.Target,
				result.FormatLabels(r.Labels), r.Summary, r.Version})
		}
		w.Flush()
		return w.Error()
	}
	if len(runs) == 0 {
		_, err := fmt.Fprintf(e.stdout, "no runs saved in %s match\n", st.Location())
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED (UTC)\tKIND\tTARGET\tLABELS\tSUMMARY")
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.StartedAt.Format("2006-01-02 15:04:05"), r.Kind, r.Target,
			result.FormatLabels(r.Labels), r.Summary)
	}
	return tw.Flush()
}
