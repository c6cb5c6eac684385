package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// WriteRunRecord prints a saved run's record for a person: its summary,
// kind, times, target, labels, version, the host that measured and the
// command line it was made with, then a blank line.
func WriteRunRecord(w io.Writer, r *result.Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "run %d: %s\n", r.ID, r.Summary)
	fmt.Fprintf(&b, "  kind      %s\n", r.Kind)
	fmt.Fprintf(&b, "  started   %s\n", r.StartedAt.Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "  saved     %s\n", r.SavedAt.Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "  target    %s\n", r.Target)
	fmt.Fprintf(&b, "  labels    %s\n", result.FormatLabels(r.Labels))
	fmt.Fprintf(&b, "  version   %s\n", r.Version)
	var host result.HostFacts
	if json.Unmarshal(r.Host, &host) == nil && host.OS != "" {
		fmt.Fprintf(&b, "  host      %s (%s/%s, %d CPUs, %s", host.Hostname, host.OS, host.Arch, host.CPUs, host.GoVersion)
		if host.Kernel != "" {
			fmt.Fprintf(&b, ", kernel %s", host.Kernel)
		}
		b.WriteString(")\n")
	}
	if cfg, ok := r.Command(); ok && cfg.Command != "" {
		line := append([]string{cfg.Command}, cfg.Args...)
		for _, name := range cfg.Changed {
			line = append(line, "--"+name+"="+cfg.Flags[name])
		}
		fmt.Fprintf(&b, "  command   %s\n", strings.Join(line, " "))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteRunJSON prints a saved result document that has no text layout
// (decodeErr nil) or does not decode as its kind, saying which, as
// indented JSON.
func WriteRunJSON(w io.Writer, r *result.Run, decodeErr error) error {
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

// WriteSavedTest prints a saved test as the client or server printed it:
// the header, every interval, the summary and the device's report, in the
// units (-f) and with the columns (-e) its command line (cfg) gave.
func WriteSavedTest(w io.Writer, r *result.Result, cfg result.RunConfig) error {
	t := savedTestText(w, r, cfg)
	t.Summary(r)
	if err := t.Err(); err != nil {
		return err
	}
	return WriteDevice(w, r)
}

// WriteSavedUnderLoad prints a saved client --latency run as the client
// printed it: the test, then the idle and loaded RTT table.
func WriteSavedUnderLoad(w io.Writer, lat *result.UnderLoad, cfg result.RunConfig) error {
	if lat.Throughput != nil {
		t := savedTestText(w, lat.Throughput, cfg)
		t.Summary(lat.Throughput)
		if err := t.Err(); err != nil {
			return err
		}
	}
	return WriteUnderLoad(w, lat)
}

// savedTestText prints a saved test's header and intervals; the summary
// is the caller's.
func savedTestText(w io.Writer, r *result.Result, cfg result.RunConfig) *Text {
	t := NewText(w, "1")
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
		t.Interval(IntervalID(r.Test.Streams), in, udp, receiving)
	}
	return t
}

// IntervalID is the bracketed id of a test's interval lines: SUM over
// several streams.
func IntervalID(streams int) string {
	if streams > 1 {
		return "SUM"
	}
	return "1"
}

// WriteTranscripts prints every device shell transcript a saved run
// holds: wherever its result document has a "device" object with a
// "transcript" (a test's, each matrix cell's, a sweep's), headed by where
// it was found. A run with none is an error.
func WriteTranscripts(w io.Writer, r *result.Run) error {
	var doc any
	if err := json.Unmarshal(r.Result, &doc); err != nil {
		return fmt.Errorf("run %d: its saved result is not valid JSON: %w", r.ID, err)
	}
	t := transcripts{run: r.ID, seen: map[string]bool{}}
	t.walk("", doc)
	if t.n == 0 {
		return fmt.Errorf("run %d (%s) holds no device shell transcript: only runs made with --dut keep one", r.ID, r.Kind)
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

// transcripts gathers a run's transcripts (WriteTranscripts).
type transcripts struct {
	run  int64
	b    strings.Builder
	n    int
	seen map[string]bool
}

// walk visits v, found at path, and everything inside it in key order.
func (t *transcripts) walk(path string, v any) {
	switch v := v.(type) {
	case map[string]any:
		if dev, ok := v["device"].(map[string]any); ok {
			if lines, ok := dev["transcript"].([]any); ok && len(lines) > 0 && !t.seen[fmt.Sprint(lines)] {
				t.seen[fmt.Sprint(lines)] = true // a matrix cell holds its result's device record too
				t.n++
				fmt.Fprintf(&t.b, "# run %d%s: device shell transcript (%d lines)\n", t.run, path, len(lines))
				for _, l := range lines {
					fmt.Fprintln(&t.b, l)
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
				t.walk(path+"."+k, v[k])
			}
		}
	case []any:
		for i, x := range v {
			t.walk(fmt.Sprintf("%s[%d]", path, i), x)
		}
	}
}

// SavedRenderers print a matrix or a sweep as the command that made it
// did, when that is more than the table (the device's own figures of
// runs made with --dut); nil prints the table alone.
type SavedRenderers struct {
	Matrix func(io.Writer, *result.Matrix) error
	Sweep  func(io.Writer, *result.Sweep) error
}

// WriteSavedResult prints a saved result document with the renderer of
// the command that made it, decoded into the type that command printed
// from, with its command line's choices (cfg). A kind with no text
// layout, or a document that does not decode, is said to be so and
// printed as indented JSON.
func WriteSavedResult(w io.Writer, r *result.Run, cfg result.RunConfig, own SavedRenderers) error {
	render, decodeErr := savedRenderer(w, r, cfg, own)
	if render != nil {
		return render()
	}
	return WriteRunJSON(w, r, decodeErr)
}

// savedRenderer decodes a saved result for its kind's renderer; nil when
// the kind has none or the document does not decode (decodeErr).
func savedRenderer(w io.Writer, r *result.Run, cfg result.RunConfig, own SavedRenderers) (render func() error, decodeErr error) {
	switch r.Kind {
	case result.KindTest:
		var res result.Result
		if decodeErr = json.Unmarshal(r.Result, &res); decodeErr == nil {
			render = func() error { return WriteSavedTest(w, &res, cfg) }
		}
	case result.KindUnderLoad:
		var lat result.UnderLoad
		if decodeErr = json.Unmarshal(r.Result, &lat); decodeErr == nil {
			render = func() error { return WriteSavedUnderLoad(w, &lat, cfg) }
		}
	case result.KindLatency:
		var res result.Latency
		if decodeErr = json.Unmarshal(r.Result, &res); decodeErr == nil {
			render = func() error { return WriteLatency(w, &res) }
		}
	case result.KindPing:
		var doc result.Ping
		if decodeErr = json.Unmarshal(r.Result, &doc); decodeErr == nil && doc.PingRun != nil {
			render = func() error { return WritePing(w, doc.PingRun, doc.Implied, cfg.Flags["explain"] == "true") }
		}
	case result.KindMatrix:
		var m result.Matrix
		if decodeErr = json.Unmarshal(r.Result, &m); decodeErr == nil {
			render = func() error { return orDefault(own.Matrix, WriteMatrix)(w, &m) }
		}
	case result.KindSweep:
		var s result.Sweep
		if decodeErr = json.Unmarshal(r.Result, &s); decodeErr == nil {
			render = func() error { return orDefault(own.Sweep, WriteSweep)(w, &s) }
		}
	case result.KindDiagnosis:
		var d result.Diagnosis
		if decodeErr = json.Unmarshal(r.Result, &d); decodeErr == nil {
			render = func() error { return WriteDiagnosis(w, &d) }
		}
	}
	return render, decodeErr
}

// orDefault is f, or def where f is nil.
func orDefault[T any](f, def func(io.Writer, *T) error) func(io.Writer, *T) error {
	if f == nil {
		return def
	}
	return f
}
