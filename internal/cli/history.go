package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
)

// historyKinds are the kinds of run the results store holds, the values
// of history --kind: a typo is a usage error, not an empty list.
var historyKinds = []string{store.KindTest, store.KindPing, store.KindLatency, "under-load", store.KindMatrix, store.KindSweep, store.KindRFC2544}

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
	if f.kind != "" && !slices.Contains(historyKinds, f.kind) {
		return usagef("invalid --kind %q: want one of %s", f.kind, strings.Join(historyKinds, ", "))
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
				store.FormatLabels(r.Labels), r.Summary, r.Version})
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
			store.FormatLabels(r.Labels), r.Summary)
	}
	return tw.Flush()
}

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
		Long: `Print one saved run in full. RUN is a run id (from wirebench history) or labels
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
		return writeTranscripts(e, r)
	}
	if f.json {
		return writeJSONDoc(e.stdout, struct {
			Schema string `json:"schema"`
			Kind   string `json:"kind"`
			*store.Run
		}{result.Schema, "run", r})
	}
	return writeRunText(e, r)
}

// writeTranscripts prints every device shell transcript a saved run
// holds: wherever its result document has a "device" object with a
// "transcript" (a test's, each matrix cell's, a sweep's), headed by where
// it was found. A run with none is an error.
func writeTranscripts(e *env, r *store.Run) error {
	var doc any
	if err := json.Unmarshal(r.Result, &doc); err != nil {
		return fmt.Errorf("run %d: its saved result is not valid JSON: %w", r.ID, err)
	}
	var b strings.Builder
	n, seen := 0, map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if dev, ok := v["device"].(map[string]any); ok {
				if lines, ok := dev["transcript"].([]any); ok && len(lines) > 0 && !seen[fmt.Sprint(lines)] {
					seen[fmt.Sprint(lines)] = true // a matrix cell holds its result's device record too
					n++
					fmt.Fprintf(&b, "# run %d%s: device shell transcript (%d lines)\n", r.ID, path, len(lines))
					for _, l := range lines {
						fmt.Fprintln(&b, l)
					}
				}
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if k != "device" {
					walk(path+"."+k, v[k])
				}
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	walk("", doc)
	if n == 0 {
		return fmt.Errorf("run %d (%s) holds no device shell transcript: only runs made with --dut keep one", r.ID, r.Kind)
	}
	_, err := io.WriteString(e.stdout, b.String())
	return err
}

// writeRunText prints a saved run for a person: the record, then the
// result as the command printed it (a test's intervals and summary), or
// as indented JSON for the kinds with no text form here.
func writeRunText(e *env, r *store.Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "run %d: %s\n", r.ID, r.Summary)
	fmt.Fprintf(&b, "  kind      %s\n", r.Kind)
	fmt.Fprintf(&b, "  started   %s\n", r.StartedAt.Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "  saved     %s\n", r.SavedAt.Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "  target    %s\n", r.Target)
	fmt.Fprintf(&b, "  labels    %s\n", store.FormatLabels(r.Labels))
	fmt.Fprintf(&b, "  version   %s\n", r.Version)
	var host store.HostFacts
	if json.Unmarshal(r.Host, &host) == nil && host.OS != "" {
		fmt.Fprintf(&b, "  host      %s (%s/%s, %d CPUs, %s", host.Hostname, host.OS, host.Arch, host.CPUs, host.GoVersion)
		if host.Kernel != "" {
			fmt.Fprintf(&b, ", kernel %s", host.Kernel)
		}
		b.WriteString(")\n")
	}
	var cfg struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Flags   map[string]string `json:"flags"`
		Changed []string          `json:"changed"`
	}
	if json.Unmarshal(r.Config, &cfg) == nil && cfg.Command != "" {
		line := append([]string{cfg.Command}, cfg.Args...)
		for _, name := range cfg.Changed {
			line = append(line, "--"+name+"="+cfg.Flags[name])
		}
		fmt.Fprintf(&b, "  command   %s\n", strings.Join(line, " "))
	}
	b.WriteString("\n")
	if _, err := fmt.Fprint(e.stdout, b.String()); err != nil {
		return err
	}
	if r.Kind == result.KindTest {
		var res result.Result
		if err := json.Unmarshal(r.Result, &res); err == nil {
			return writeTestText(e, &res)
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, r.Result, "", "  "); err != nil {
		return fmt.Errorf("run %d: its saved result is not valid JSON: %w", r.ID, err)
	}
	out.WriteByte('\n')
	_, err := e.stdout.Write(out.Bytes())
	return err
}

// writeTestText prints a saved test as the client or server printed it.
func writeTestText(e *env, r *result.Result) error {
	t := report.NewText(e.stdout, "1")
	t.Header(r.Test, r.Role, "", r.Test.Peer)
	udp := r.Test.Protocol == result.UDP
	for _, in := range r.Intervals {
		receiving := r.Test.Direction == result.DirReceive
		if in.Flow == "reverse" {
			receiving = !receiving
		}
		t.Interval(intervalID(r.Test.Streams), in, udp, receiving)
	}
	t.Summary(r)
	return t.Err()
}
