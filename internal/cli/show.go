package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

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

// runConfig is the command line a saved run records (store.Run.Config).
type runConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Flags   map[string]string `json:"flags"`
	Changed []string          `json:"changed"`
}

// writeRunText prints a saved run for a person: the record, then the
// result in the layout the command that made it printed it.
func writeRunText(e *env, r *store.Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "run %d: %s\n", r.ID, r.Summary)
	fmt.Fprintf(&b, "  kind      %s\n", r.Kind)
	fmt.Fprintf(&b, "  started   %s\n", r.StartedAt.Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "  saved     %s\n", r.SavedAt.Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "  target    %s\n", r.Target)
	fmt.Fprintf(&b, "  labels    %s\n", result.FormatLabels(r.Labels))
	fmt.Fprintf(&b, "  version   %s\n", r.Version)
	var host store.HostFacts
	if json.Unmarshal(r.Host, &host) == nil && host.OS != "" {
		fmt.Fprintf(&b, "  host      %s (%s/%s, %d CPUs, %s", host.Hostname, host.OS, host.Arch, host.CPUs, host.GoVersion)
		if host.Kernel != "" {
			fmt.Fprintf(&b, ", kernel %s", host.Kernel)
		}
		b.WriteString(")\n")
	}
	var cfg runConfig
	if json.Unmarshal(r.Config, &cfg) == nil && cfg.Command != "" {
		line := append([]string{cfg.Command}, cfg.Args...)
		for _, name := range cfg.Changed {
			line = append(line, "--"+name+"="+cfg.Flags[name])
		}
		fmt.Fprintf(&b, "  command   %s\n", strings.Join(line, " "))
	}
	b.WriteString("\n")
	if _, err := io.WriteString(e.stdout, b.String()); err != nil {
		return err
	}
	return writeRunResult(e.stdout, r, cfg)
}

// writeRunResult prints a saved result document with the renderer of the
// command that made it, decoded into the type that command printed from.
// A kind with no text layout, or a document that does not decode, is said
// to be so and printed as indented JSON.
func writeRunResult(w io.Writer, r *store.Run, cfg runConfig) error {
	var render func() error
	var decodeErr error
	switch r.Kind {
	case result.KindTest:
		var res result.Result
		if decodeErr = json.Unmarshal(r.Result, &res); decodeErr == nil {
			render = func() error { return writeTestText(w, &res, cfg) }
		}
	case result.KindUnderLoad:
		var lat result.UnderLoad
		if decodeErr = json.Unmarshal(r.Result, &lat); decodeErr == nil {
			render = func() error { return writeUnderLoadRun(w, &lat, cfg) }
		}
	case result.KindLatency:
		var res result.Latency
		if decodeErr = json.Unmarshal(r.Result, &res); decodeErr == nil {
			render = func() error { return report.WriteLatency(w, &res) }
		}
	case result.KindPing:
		var doc result.Ping
		if decodeErr = json.Unmarshal(r.Result, &doc); decodeErr == nil && doc.PingRun != nil {
			render = func() error { return report.WritePing(w, doc.PingRun, doc.Implied, cfg.Flags["explain"] == "true") }
		}
	case result.KindMatrix:
		var m result.Matrix
		if decodeErr = json.Unmarshal(r.Result, &m); decodeErr == nil {
			render = func() error { return writeMatrixRun(w, &m) }
		}
	case result.KindSweep:
		var s result.Sweep
		if decodeErr = json.Unmarshal(r.Result, &s); decodeErr == nil {
			render = func() error { return writeSweepRun(w, &s) }
		}
	}
	if render != nil {
		return render()
	}
	note := fmt.Sprintf("wirebench show has no text layout for a run of kind %q; its result document as saved (JSON):", r.Kind)
	if decodeErr != nil {
		note = fmt.Sprintf("the saved %s document does not decode (%v); as saved (JSON):", r.Kind, decodeErr)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, r.Result, "", "  "); err != nil {
		return fmt.Errorf("run %d: its saved result is not valid JSON: %w", r.ID, err)
	}
	_, err := fmt.Fprintf(w, "%s\n%s\n", note, out.Bytes())
	return err
}

// writeTestText prints a saved test as the client or server printed it:
// the header, every interval, the summary and the device's report, in the
// units (-f) and with the columns (-e) the command was given.
func writeTestText(w io.Writer, r *result.Result, cfg runConfig) error {
	t := testText(w, r, cfg)
	t.Summary(r)
	if err := t.Err(); err != nil {
		return err
	}
	return report.WriteDevice(w, r)
}

// testText prints a saved test's header and intervals; the summary is
// the caller's.
func testText(w io.Writer, r *result.Result, cfg runConfig) *report.Text {
	t := report.NewText(w, "1")
	if f := cfg.Flags["format"]; len(f) == 1 {
		t.SetFormat(f[0])
	}
	t.SetEnhanced(cfg.Flags["enhanced"] == "true")
	t.Header(r.Test, r.Role, "", r.Test.Peer)
	if cfg.Flags["interval"] == "0" {
		// Without -i the command printed no interval rows: the one
		// interval kept (the whole test) is the summary's.
		return t
	}
	udp := r.Test.Protocol == result.UDP
	for _, in := range r.Intervals {
		receiving := r.Test.Direction == result.DirReceive
		if in.Flow == "reverse" {
			receiving = !receiving
		}
		t.Interval(intervalID(r.Test.Streams), in, udp, receiving)
	}
	return t
}

// writeUnderLoadRun prints a saved client --latency run as the client
// printed it: the test, then the idle and loaded RTT table.
func writeUnderLoadRun(w io.Writer, lat *result.UnderLoad, cfg runConfig) error {
	if lat.Throughput != nil {
		t := testText(w, lat.Throughput, cfg)
		t.Summary(lat.Throughput)
		if err := t.Err(); err != nil {
			return err
		}
	}
	return report.WriteUnderLoad(w, lat)
}

// writeMatrixRun prints a matrix as the matrix command did: the table,
// then each cell's device report (runs made with --dut).
func writeMatrixRun(w io.Writer, m *result.Matrix) error {
	if err := report.WriteMatrix(w, m); err != nil {
		return err
	}
	return writeMatrixDevice(w, m)
}

// writeSweepRun prints a sweep as the sweep command did: the table, then
// the device's report (runs made with --dut).
func writeSweepRun(w io.Writer, s *result.Sweep) error {
	if err := report.WriteSweep(w, s); err != nil {
		return err
	}
	return writeSweepDevice(w, s)
}
