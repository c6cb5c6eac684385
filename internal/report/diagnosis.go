package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// WriteDiagnosis prints a diagnosis: its verdict, each finding with its
// figures, confidence and evidence, what it cannot tell, and its runs.
func WriteDiagnosis(w io.Writer, d *result.Diagnosis) error {
	var b strings.Builder
	t := d.Test
	fmt.Fprintf(&b, "diagnose: %s at %s port %d, medium %s, %d runs in %.0f s", t.Mode, t.Host, t.Port, t.Medium, len(d.Runs), d.Seconds)
	if t.DUT != "" {
		fmt.Fprintf(&b, ", through the device's shell at %s", t.DUT)
		if d.Device != nil && d.Device.Shell != "" {
			fmt.Fprintf(&b, " (%s)", d.Device.Shell)
		}
	}
	b.WriteString("\n\n")
	b.WriteString(d.Verdict + "\n\n")
	if len(d.Findings) > 0 {
		b.WriteString("Findings:\n")
	}
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "  %s (%s confidence; %s): %s\n", f.Kind, f.Confidence, diagnosisFigures(f), f.Text)
		fmt.Fprintf(&b, "    evidence: runs %s\n", joinInts(f.EvidenceRuns))
	}
	if len(d.CannotTell) > 0 {
		b.WriteString("Cannot tell:\n")
		for _, c := range d.CannotTell {
			b.WriteString("  " + c + "\n")
		}
	}
	b.WriteString("\nRuns:\n")
	fmt.Fprintf(&b, "  %-4s %-9s %-6s %-10s %-10s %-13s %-9s %-10s %s\n", "run", "purpose", "size", "asked/s", "sent/s", "delivered/s", "loss", "rtt (ms)", "tick")
	for _, r := range d.Runs {
		rtt, tick := "", ""
		if r.RTTLateMs > 0 {
			rtt = fmt.Sprintf("%.1f-%.1f", r.RTTMinMs, r.RTTLateMs)
		}
		if r.TickHz > 0 {
			tick = fmt.Sprintf("%.0f per %.3g ms", r.FramesPerTick, 1000/r.TickHz)
		}
		fmt.Fprintf(&b, "  %-4d %-9s %-6d %-10.0f %-10.0f %-13.0f %-9s %-10s %s\n", r.ID, r.Purpose, r.Size, r.AskedPPS, r.SentPPS, r.DeliveredPPS,
			fmt.Sprintf("%.2f%%", r.LossPercent), rtt, tick)
	}
	for _, warn := range d.Warnings {
		b.WriteString("warning: " + warn + "\n")
	}
	if d.Error != "" {
		b.WriteString("error: " + d.Error + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// diagnosisFigures spells a finding's figures and words, by name.
func diagnosisFigures(f result.DiagnosisFinding) string {
	var parts []string
	for _, k := range slices.Sorted(mapKeys(f.Figures)) {
		parts = append(parts, k+"="+strconv.FormatFloat(f.Figures[k], 'g', 6, 64))
	}
	for _, k := range slices.Sorted(mapKeys(f.Words)) {
		parts = append(parts, k+"="+f.Words[k])
	}
	return strings.Join(parts, " ")
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// WriteDiagnosisCSV prints one row per finding figure:
// kind,confidence,figure,value,evidence_runs,text.
func WriteDiagnosisCSV(w io.Writer, d *result.Diagnosis) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"kind", "confidence", "figure", "value", "evidence_runs", "text"})
	for _, f := range d.Findings {
		runs := strings.ReplaceAll(joinInts(f.EvidenceRuns), ", ", " ")
		for _, k := range slices.Sorted(mapKeys(f.Figures)) {
			_ = cw.Write([]string{f.Kind, f.Confidence, k, strconv.FormatFloat(f.Figures[k], 'g', -1, 64), runs, f.Text})
		}
		for _, k := range slices.Sorted(mapKeys(f.Words)) {
			_ = cw.Write([]string{f.Kind, f.Confidence, k, f.Words[k], runs, f.Text})
		}
		if len(f.Figures)+len(f.Words) == 0 {
			_ = cw.Write([]string{f.Kind, f.Confidence, "", "", runs, f.Text})
		}
	}
	cw.Flush()
	return cw.Error()
}
