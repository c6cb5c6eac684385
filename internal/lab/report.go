package lab

import (
	"fmt"
	"io"
	"time"

	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
)

// Counts is what one direction of a relay (or a reflector) did.
type Counts = result.RelayCounts

// DataCounts is Counts for iperf2 data datagrams.
type DataCounts = result.RelayDataCounts

// Report is the closing document of a relay or reflector run: a
// result.Relay, with the lab's ways of filling and printing it.
type Report result.Relay

func newReport(kind, listen, spec string, seed uint64, start time.Time) Report {
	return Report{Schema: result.Schema, Kind: kind, Listen: listen, Model: spec, Seed: seed,
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

// WriteText prints the report in plain lines (report.WriteRelay).
func (r *Report) WriteText(w io.Writer) { report.WriteRelay(w, (*result.Relay)(r)) }

// seedFor returns the spec's seed, or one from the clock when none was
// given (reported, so a run can be repeated).
func seedFor(s model.Spec) uint64 {
	if s.HasSeed {
		return s.Seed
	}
	return uint64(time.Now().UnixNano()) % 1_000_000_000
}
