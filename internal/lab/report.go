package lab

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/wirebench/wirebench/internal/lab/model"
)

// Counts is what one direction of a relay (or a reflector) did.
type Counts struct {
	// In is every datagram received; Forwarded the ones sent on (each once,
	// however many copies); Dropped the ones the model dropped. In =
	// Forwarded + Dropped once the run has ended.
	In        int64 `json:"in"`
	Forwarded int64 `json:"forwarded"`
	Dropped   int64 `json:"dropped"`
	// Duplicated were sent twice, Corrupted with one bit flipped.
	Duplicated int64 `json:"duplicated"`
	Corrupted  int64 `json:"corrupted"`
	// DroppedBy splits Dropped by the part of the model that dropped them
	// (loss, burst, max, rate_queue, service_queue, tick_queue).
	DroppedBy map[string]int64 `json:"dropped_by"`
	// SendErrors counts sends the kernel refused (the datagram is lost
	// although the model forwarded it).
	SendErrors int64 `json:"send_errors"`
	// MaxGapMS is the longest time between two datagrams received, in
	// milliseconds: a sender that stalled (a loaded host) shows here, and a
	// rate-limiting stage whose queue ran dry meanwhile lost those ticks.
	MaxGapMS float64 `json:"max_arrival_gap_ms"`
	// Data counts only iperf2-layout data datagrams (id above 0) and, on
	// a relay's forward direction, each test's FIN as its receiver counts
	// it (seqState.countFIN).
	Data DataCounts `json:"data"`

	droppedBy [len(model.ReasonNames)]int64
}

// DataCounts is Counts for iperf2 data datagrams, to check a test's own
// loss, out-of-order and duplicate counts against exactly.
type DataCounts struct {
	In         int64 `json:"in"`
	Forwarded  int64 `json:"forwarded"`
	Dropped    int64 `json:"dropped"`
	Reordered  int64 `json:"reordered"` // really sent after a datagram of its flow with a higher id
	Duplicated int64 `json:"duplicated"`
	Corrupted  int64 `json:"corrupted"`
}

// Report is the closing document of a relay or reflector run
// (schema wirebench/1, kind "relay" or "reflect"; docs/lab.md).
type Report struct {
	Schema   string  `json:"schema"`
	Kind     string  `json:"kind"`
	Listen   string  `json:"listen"`
	To       string  `json:"to,omitempty"`
	Model    string  `json:"model"`
	Seed     uint64  `json:"seed"`
	Both     bool    `json:"both,omitempty"`
	Duration float64 `json:"duration_s"`
	Flows    int     `json:"flows,omitempty"`
	// Datagrams and Data are the forward direction (client → target) of a
	// relay, or everything a reflector received.
	Datagrams Counts     `json:"datagrams"`
	Data      DataCounts `json:"data"`
	// Reverse is the target → client direction of a relay.
	Reverse *Counts `json:"reverse,omitempty"`
	// TCP is what the TCP proxy did (relay --tcp).
	TCP *TCPCounts `json:"tcp,omitempty"`
	// Warnings say when a count cannot be taken at face value.
	Warnings []string `json:"warnings"`
}

func newReport(kind, listen, spec string, seed uint64, start time.Time) Report {
	return Report{Schema: "wirebench/1", Kind: kind, Listen: listen, Model: spec, Seed: seed,
		Duration: time.Since(start).Seconds(), Warnings: []string{}}
}

// warn adds the warnings that a direction's counters call for; dropsKnown
// is false when the platform could not say what the kernel dropped at the
// receiving socket.
func (r *Report) warn(dir string, c Counts, kernelDrops uint64, dropsKnown bool) {
	if !dropsKnown {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: datagrams the kernel dropped at the receiving socket (receive buffer full) cannot be counted on this platform: in counts only what reached the model", dir))
	}
	if c.SendErrors > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %d sends failed: those datagrams were lost by the relay itself, not by the model", dir, c.SendErrors))
	}
	if kernelDrops > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: the kernel dropped %d datagrams at the relay's socket (receive buffer full) before the model saw them", dir, kernelDrops))
	}
}

// WriteText prints the report in plain lines.
func (r *Report) WriteText(w io.Writer) {
	name := map[string]string{"relay": "relay", "reflect": "reflector"}[r.Kind]
	fmt.Fprintf(w, "%s %s", name, r.Listen)
	if r.To != "" {
		fmt.Fprintf(w, " -> %s", r.To)
	}
	fmt.Fprintf(w, ", model %q, seed %d, %.1f s", r.Model, r.Seed, r.Duration)
	if r.Kind == "relay" {
		fmt.Fprintf(w, ", %d client sources", r.Flows)
	}
	fmt.Fprintln(w)
	dir := "forward"
	if r.Kind == "reflect" {
		dir = "reflected"
	}
	writeCounts(w, dir, r.Datagrams)
	if r.Reverse != nil {
		writeCounts(w, "reverse", *r.Reverse)
	}
	if t := r.TCP; t != nil {
		fmt.Fprintf(w, "  tcp       %d connections (%d refused by the target), %d bytes forward, %d bytes back\n",
			t.Connections, t.Failed, t.BytesForward, t.BytesReverse)
	}
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

func writeCounts(w io.Writer, dir string, c Counts) {
	fmt.Fprintf(w, "  %-9s datagrams: %d in, %d forwarded, %d dropped, %d duplicated, %d corrupted",
		dir, c.In, c.Forwarded, c.Dropped, c.Duplicated, c.Corrupted)
	if len(c.DroppedBy) > 0 {
		keys := make([]string, 0, len(c.DroppedBy))
		for k := range c.DroppedBy {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprint(w, " (")
		for i, k := range keys {
			if i > 0 {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprintf(w, "%s %d", k, c.DroppedBy[k])
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w)
	d := c.Data
	fmt.Fprintf(w, "  %-9s iperf2 data: %d in, %d forwarded, %d dropped, %d reordered, %d duplicated, %d corrupted\n",
		"", d.In, d.Forwarded, d.Dropped, d.Reordered, d.Duplicated, d.Corrupted)
}

// seedFor returns the spec's seed, or one from the clock when none was
// given (reported, so a run can be repeated).
func seedFor(s model.Spec) uint64 {
	if s.HasSeed {
		return s.Seed
	}
	return uint64(time.Now().UnixNano()) % 1_000_000_000
}
