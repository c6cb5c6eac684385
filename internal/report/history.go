package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// WriteHistory prints a listing of saved runs as a table, oldest first;
// where names the store, for the line that says none matched.
func WriteHistory(w io.Writer, runs []result.Run, where string) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintf(w, "no runs saved in %s match\n", where)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED (UTC)\tKIND\tTARGET\tLABELS\tSUMMARY")
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.StartedAt.Format("2006-01-02 15:04:05"), r.Kind, r.Target,
			result.FormatLabels(r.Labels), r.Summary)
	}
	return tw.Flush()
}

// WriteHistoryCSV prints a listing of saved runs as CSV: id, started_at,
// kind, target, labels, summary, version.
func WriteHistoryCSV(w io.Writer, runs []result.Run) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"id", "started_at", "kind", "target", "labels", "summary", "version"})
	for _, r := range runs {
		_ = cw.Write([]string{strconv.FormatInt(r.ID, 10), r.StartedAt.Format(time.RFC3339Nano), r.Kind, r.Target,
			result.FormatLabels(r.Labels), r.Summary, r.Version})
	}
	cw.Flush()
	return cw.Error()
}
