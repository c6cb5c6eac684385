package report

import (
	"encoding/csv"
	"fmt"
	"github.com/wirebench/wirebench/internal/result"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/units"
)

// WriteMatrix prints the matrix: one line per cell, then the grid of
// direction × protocol, then the warnings.
func WriteMatrix(w io.Writer, m *result.Matrix) error {
	var b strings.Builder
	fmt.Fprintf(&b, "matrix: %s port %d, %s dialect, %s s per cell", m.Host, m.Port, m.Dialect, strconv.FormatFloat(m.Duration, 'f', -1, 64))
	switch {
	case m.RatePPS > 0:
		fmt.Fprintf(&b, ", UDP at %.0f pps", m.RatePPS)
	case m.RateBPS > 0:
		fmt.Fprintf(&b, ", UDP at %s", units.FormatBits(m.RateBPS))
	}
	if m.Medium != "" {
		fmt.Fprintf(&b, ", medium %s", m.Medium)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-8s %-18s %-14s %12s %9s %11s %8s  %s\n", "proto", "direction", "method", "Mbit/s", "loss", "jitter", "% line", "status")
	for _, c := range m.Cells {
		dir := c.Direction
		if c.Simultaneous {
			dir += " (bidir)"
		}
		status := c.Status
		if c.Basis == "sender" {
			status += " (sender's count)"
		}
		if c.Reason != "" {
			status += ": " + c.Reason
		}
		fmt.Fprintf(&b, "%-8s %-18s %-14s %12s %9s %11s %8s  %s\n", strings.ToUpper(c.Protocol), dir, c.Method,
			matrixOpt(c.BitsPerSecond, 1e-6, "%.2f"), matrixOpt(c.LossPercent, 1, "%.2f %%"), matrixOpt(c.JitterMS, 1, "%.3f ms"),
			matrixOpt(c.PercentOfLine, 1, "%.1f"), status)
	}
	b.WriteString("\n")
	writeMatrixGrid(&b, m)
	for _, wng := range matrixWarnings(m) {
		fmt.Fprintf(&b, "warning: %s\n", wng)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMatrixGrid prints the TCP/UDP × upload/download summary: a row per direction, a column per
// protocol, Mbit/s in each.
func writeMatrixGrid(b *strings.Builder, m *result.Matrix) {
	var protos []string
	type rowKey struct {
		dir  string
		both bool
	}
	var rows []rowKey
	cells := map[rowKey]map[string]result.MatrixCell{}
	for _, c := range m.Cells {
		k := rowKey{c.Direction, c.Simultaneous}
		if cells[k] == nil {
			cells[k] = map[string]result.MatrixCell{}
			rows = append(rows, k)
		}
		if !slices.Contains(protos, c.Protocol) {
			protos = append(protos, c.Protocol)
		}
		cells[k][c.Protocol] = c
	}
	fmt.Fprintf(b, "%-32s", "direction")
	for _, p := range protos {
		fmt.Fprintf(b, " %14s", strings.ToUpper(p)+" (Mbit/s)")
	}
	b.WriteString("\n")
	for _, k := range rows {
		label := map[string]string{result.MatrixUpload: "upload (we send, peer receives)", result.MatrixDownload: "download (peer sends, we receive)"}[k.dir]
		if k.both {
			label = k.dir + ", both at once"
		}
		fmt.Fprintf(b, "%-32s", label)
		for _, p := range protos {
			c, ok := cells[k][p]
			v := "-"
			switch {
			case !ok:
			case c.Status == "failed": // a partial figure is in its row above, marked so
				v = c.Status
			case c.BitsPerSecond != nil:
				v = fmt.Sprintf("%.2f", *c.BitsPerSecond/1e6)
				if c.Basis == "sender" {
					v += "*"
				}
			default:
				v = c.Status
			}
			fmt.Fprintf(b, " %14s", v)
		}
		b.WriteString("\n")
	}
	for _, c := range m.Cells {
		if c.Basis == "sender" {
			b.WriteString("* what was sent: the peer does not report what it received\n")
			break
		}
	}
}

// matrixOpt formats an optional figure scaled by k, or "-" when absent.
func matrixOpt(v *float64, k float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v*k)
}

// WriteMatrixCSV prints the matrix as CSV: a header, then one row per cell.
func WriteMatrixCSV(w io.Writer, m *result.Matrix) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"protocol", "direction", "simultaneous", "method", "bits_per_second", "loss_percent", "jitter_ms",
		"percent_of_line", "basis", "status", "reason"})
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	for _, c := range m.Cells {
		_ = cw.Write([]string{c.Protocol, c.Direction, strconv.FormatBool(c.Simultaneous), c.Method, num(c.BitsPerSecond),
			num(c.LossPercent), num(c.JitterMS), num(c.PercentOfLine), c.Basis, c.Status, c.Reason})
	}
	cw.Flush()
	return cw.Error()
}
