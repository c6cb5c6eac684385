package htmlreport

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot/plotter"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544/findings"
)

// An RFC 2544 run's charts: the throughput per size (NDR, PDR and the
// medium's line rate), the frame loss curve of each size, and per size the
// latency against the load. Each builder returns the series it draws, so
// that the tests can read them without drawing.

// rfcThroughputSeries is the NDR and PDR per size in Mbit/s of UDP
// payload, with the medium's line rate per size as a dashed reference —
// unless it lies more than limitOffScale above the highest rate measured
// (a slow device on a fast medium): then the axis follows the data, the
// line is left out and note says where it is.
func rfcThroughputSeries(v *result.RFC2544) (ss []series, note string) {
	var ndr, pdr, line plotter.XYs
	for _, z := range v.Sizes {
		if !rfcDone(z, result.RFC2544TestThroughput) {
			continue
		}
		// A size where no rate passed has no point: its 0 is "below the
		// lowest rate tried", not a rate (the table says none).
		x := float64(z.Size)
		if z.NDRPPS > 0 {
			ndr = append(ndr, plotter.XY{X: x, Y: z.NDRBPS / 1e6})
		}
		if z.PDRPPS > 0 {
			pdr = append(pdr, plotter.XY{X: x, Y: z.PDRBPS / 1e6})
		}
		if z.LinePPS > 0 {
			line = append(line, plotter.XY{X: x, Y: rfcLineBPS(z) / 1e6})
		}
	}
	lineName := "line rate"
	if v.Test.Medium != "" {
		lineName += " (" + v.Test.Medium + ")"
	}
	ss = []series{
		{name: "NDR (no loss)", xys: ndr, role: "ndr"},
		{name: fmt.Sprintf("PDR (loss ≤ %g %%)", v.Test.PDRPercent), xys: pdr, role: "pdr"},
	}
	dataMax, lineMax := math.Max(maxY(ndr), maxY(pdr)), maxY(line)
	if len(line) > 0 && dataMax > 0 && lineMax > limitOffScale*dataMax {
		return ss, fmt.Sprintf("the %s (up to %.1f Mbit/s) is %.0f× the highest rate measured: off this scale, which follows the data (the table lists it)",
			lineName, lineMax, lineMax/dataMax)
	}
	return append(ss, series{name: lineName, xys: line, dash: true, role: "line"}), ""
}

// rfcLossSeries is the frame loss curve: one series per size, the loss
// against the offered share of the medium's maximum rate, ascending.
func rfcLossSeries(v *result.RFC2544) []series {
	var out []series
	for _, z := range v.Sizes {
		if !rfcDone(z, result.RFC2544TestLoss) || len(z.LossCurve) == 0 {
			continue
		}
		var xys plotter.XYs
		for _, p := range z.LossCurve {
			xys = append(xys, plotter.XY{X: p.OfferedPercent, Y: p.LossPercent})
		}
		sort.SliceStable(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
		out = append(out, series{name: strconv.Itoa(z.Size) + " B", xys: xys, role: "loss"})
	}
	return out
}

// rfcLatencySeries is one size's latency against the load (a share of its
// NDR): p50 and p99 with points, min and max as the dashed edges of the
// band every datagram fell in.
func rfcLatencySeries(z result.RFC2544Size) []series {
	var lo, p50, p99, hi plotter.XYs
	pts := append([]result.RFC2544LatencyPoint(nil), z.Latency...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].LoadPercent < pts[j].LoadPercent })
	for _, p := range pts {
		x := p.LoadPercent
		lo = append(lo, plotter.XY{X: x, Y: p.MinMS})
		p50 = append(p50, plotter.XY{X: x, Y: p.P50MS})
		p99 = append(p99, plotter.XY{X: x, Y: p.P99MS})
		hi = append(hi, plotter.XY{X: x, Y: p.MaxMS})
	}
	if len(pts) == 0 {
		return nil
	}
	return []series{
		{name: "p50", xys: p50, role: "p50"},
		{name: "p99", xys: p99, role: "p99"},
		{name: "max", xys: hi, dash: true, role: "max"},
		{name: "min", xys: lo, dash: true, role: "min"},
	}
}

func (r *Report) rfc2544Section(s *Section, d Document) error {
	var v result.RFC2544
	if err := d.view(&v); err != nil {
		return err
	}
	t := v.Test
	s.Subtitle = fmt.Sprintf("RFC 2544 benchmark of %s:%d (far end: %s)", t.Host, t.Port, t.Mode)
	s.Subtitle += mediumSuffix(t.Medium)
	if t.Strict {
		s.Subtitle += ", RFC 2544's trial lengths"
	}
	s.Subtitle += fmt.Sprintf(", %d sizes, %.0f s", len(v.Sizes), v.Seconds)
	sort.SliceStable(v.Sizes, func(i, j int) bool { return v.Sizes[i].Size < v.Sizes[j].Size })
	// What was found opens the section: the tables, each with the
	// warnings on its figures under it, one per cause (findings.Of); the
	// section's own warnings are the run's as a whole.
	fs := findings.Of(&v)
	s.Lead = rfcTables(&v)
	for _, tb := range s.Lead {
		for _, f := range findings.ForTest(fs, tb.Name) {
			if f.Note {
				tb.Notes = append(tb.Notes, Warning{Text: f.Text, Detail: f.Detail})
			} else {
				tb.Warnings = append(tb.Warnings, Warning{Text: f.Text, Detail: f.Detail})
			}
		}
	}
	s.Warnings = findings.RunWarnings(&v, fs)
	if v.Interrupted {
		s.Warnings = append(s.Warnings, "interrupted: only what is shown was finished")
	}
	s.Warnings = append(s.Warnings, errorOf(v.Error)...)

	if has(t.Tests, result.RFC2544TestThroughput) {
		ss, note := rfcThroughputSeries(&v)
		caption := "the rate the far end delivered, held for the confirming trial; dashed, the medium's maximum"
		if note != "" {
			caption = "the rate the far end delivered, held for the confirming trial; " + note
		}
		p, err := linesChart("Throughput by frame size", "payload size (bytes)", "Mbit/s (UDP payload)", ss)
		if err := r.addNoted(s, "Throughput (NDR, PDR)", caption, p, err); err != nil {
			return err
		}
		p, err = linesChart("Frame rate against the medium's, by frame size", "payload size (bytes)", "% of the medium's frame rate", rfcFrameRateSeries(&v))
		caption = "frames per second the far end delivered, as a share of the most the medium carries at that size (dashed: 100 %)"
		if err := r.addNoted(s, "Frame rate (NDR, PDR)", caption, p, err); err != nil {
			return err
		}
	}
	if has(t.Tests, result.RFC2544TestLoss) {
		p, err := linesChart("Frame loss rate", "offered load (% of the medium's maximum rate)", "frames lost (%)", rfcLossSeries(&v))
		if err := r.addNoted(s, "Frame loss rate", "one line per frame size; steps below two that lost nothing are not run", p, err); err != nil {
			return err
		}
	}
	if has(t.Tests, result.RFC2544TestLatency) {
		for _, z := range v.Sizes {
			if !rfcDone(z, result.RFC2544TestLatency) {
				continue
			}
			w := rfcLatencyWordsFor(z.Latency)
			title := fmt.Sprintf("%s at load, %d B", w.what, z.Size)
			p, err := linesChart(title, "load (% of the NDR)", w.axis, rfcLatencySeries(z))
			if err := r.addNoted(s, title, w.note, p, err); err != nil {
				return err
			}
		}
	}
	return nil
}

func has(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// rfcTables are RFC 2544's report layout: one table per test run, the
// sizes as rows.
func rfcTables(v *result.RFC2544) []*Table {
	var out []*Table
	if has(v.Test.Tests, result.RFC2544TestThroughput) {
		out = append(out, rfcThroughputTable(v))
	}
	if has(v.Test.Tests, result.RFC2544TestLatency) {
		out = append(out, rfcLatencyTable(v))
	}
	if has(v.Test.Tests, result.RFC2544TestLoss) {
		out = append(out, rfcLossTable(v))
	}
	if has(v.Test.Tests, result.RFC2544TestBackToBack) {
		out = append(out, rfcBackToBackTable(v))
	}
	return out
}

func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

func rfcThroughputTable(v *result.RFC2544) *Table {
	tb := &Table{Name: result.RFC2544TestThroughput,
		Title: fmt.Sprintf("Throughput (NDR: no loss; PDR: loss ≤ %g %%; the rate the far end delivered)", v.Test.PDRPercent),
		Head:  []string{"size (B)", "NDR pkt/s", "NDR Mbit/s", "% of line", "PDR pkt/s", "PDR Mbit/s", "PDR loss %", "line pkt/s", "held (s)"}}
	for _, z := range v.Sizes {
		if !rfcDone(z, result.RFC2544TestThroughput) {
			continue
		}
		// A rate that is this host's limit is a lower bound of the far
		// end's: marked so in its cells.
		nb, pb := "", ""
		if z.NDR != nil && z.NDR.LimitedByHost {
			nb = "≥ "
		}
		if z.PDR != nil && z.PDR.LimitedByHost {
			pb = "≥ "
		}
		pct, loss, held := "–", "–", "–"
		if z.LinePPS > 0 {
			pct = fmt.Sprintf("%s%.1f", nb, 100*z.NDRPPS/z.LinePPS)
		}
		if z.PDR != nil && z.PDR.LossPercent != nil {
			loss = f3(*z.PDR.LossPercent) // null: no trial measured it; stays "–"
		}
		if z.NDR != nil {
			held = strconv.FormatFloat(z.NDR.HeldS, 'g', -1, 64)
		}
		ndrPPS, ndrMbps, pdrPPS, pdrMbps := fmt.Sprintf("%s%.0f", nb, z.NDRPPS), nb+mbps(z.NDRBPS), fmt.Sprintf("%s%.0f", pb, z.PDRPPS), pb+mbps(z.PDRBPS)
		if !(z.NDRPPS > 0) {
			ndrPPS, ndrMbps, pct, held = "none", "–", "–", "–"
		}
		if !(z.PDRPPS > 0) {
			pdrPPS, pdrMbps, loss = "none", "–", "–"
		}
		tb.Rows = append(tb.Rows, []string{strconv.Itoa(z.Size), ndrPPS, ndrMbps, pct, pdrPPS, pdrMbps, loss, fmt.Sprintf("%.0f", z.LinePPS), held})
	}
	return tb
}

// rfcLatencyWords name what an RFC 2544 run's latency points measured,
// by their kind (result.RFC2544LatencyPoint.Kind).
type rfcLatencyWords struct{ what, axis, note, table string }

var rfcLatencyKinds = map[string]rfcLatencyWords{
	"round_trip": {"Latency", "round trip (ms)", "p50 and p99 of every datagram's round trip; dashed, the min and the max",
		"Latency at load (round trip, ms: p50 / p99 / max at each share of the NDR)"},
	"one_way": {"One-way latency", "one way (ms)", "p50 and p99 of every datagram's one-way transit, timed by the wirebench server on our clock; dashed, the min and the max",
		"Latency at load (one way, same clock, ms: p50 / p99 / max at each share of the NDR)"},
	"delay_variation": {"Delay variation", "above the fastest datagram (ms)", "NOT latency: the server's clock may differ from ours, so each trial's fastest datagram is subtracted; p50 and p99, dashed the min (0) and the max",
		"Delay variation at load (NOT latency: ms above each trial's fastest datagram, clocks not shared: p50 / p99 / max at each share of the NDR)"},
}

// rfcLatencyWordsFor is the words for pts (round trip when they are none).
func rfcLatencyWordsFor(pts []result.RFC2544LatencyPoint) rfcLatencyWords {
	if len(pts) > 0 {
		if w, ok := rfcLatencyKinds[pts[0].Kind]; ok {
			return w
		}
	}
	return rfcLatencyKinds["round_trip"]
}

// rfcLatencyTable has a column per load: "p50 / p99 / max" in ms.
func rfcLatencyTable(v *result.RFC2544) *Table {
	var pts []result.RFC2544LatencyPoint
	for _, z := range v.Sizes {
		pts = append(pts, z.Latency...)
	}
	tb := &Table{Name: result.RFC2544TestLatency, Title: rfcLatencyWordsFor(pts).table, Head: []string{"size (B)"}}
	for _, l := range v.Test.Loads {
		tb.Head = append(tb.Head, fmt.Sprintf("%g %%", l))
	}
	for _, z := range v.Sizes {
		if !rfcDone(z, result.RFC2544TestLatency) {
			continue
		}
		row := []string{strconv.Itoa(z.Size)}
		if len(z.Latency) == 0 {
			row = append(row, "not measured (see the warnings)")
			tb.Rows = append(tb.Rows, row)
			continue
		}
		for _, l := range v.Test.Loads {
			row = append(row, pointCell(z.Latency, func(p result.RFC2544LatencyPoint) (bool, string, bool) {
				return p.LoadPercent == l, fmt.Sprintf("%s / %s / %s", f3(p.P50MS), f3(p.P99MS), f3(p.MaxMS)), p.HostLimited
			}))
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}

// pointCell is the cell of the last point of ps that of says is the
// column's (of returns whether it is, its text, and whether this host
// sent less than asked: marked *), "–" when none is.
func pointCell[P any](ps []P, of func(P) (bool, string, bool)) string {
	cell := "–"
	for _, p := range ps {
		if ok, text, hostLimited := of(p); ok {
			cell = text
			if hostLimited {
				cell += " *"
			}
		}
	}
	return cell
}

// rfcLossTable has a column per step, 100 % of the medium's rate first.
func rfcLossTable(v *result.RFC2544) *Table {
	tb := &Table{Name: result.RFC2544TestLoss, Title: "Frame loss rate (% lost at each share of the medium's maximum rate; * this host sent less than asked; – not run)",
		Head: []string{"size (B)"}}
	for s := 100; s >= 10; s -= 10 {
		tb.Head = append(tb.Head, fmt.Sprintf("%d %%", s))
	}
	for _, z := range v.Sizes {
		if !rfcDone(z, result.RFC2544TestLoss) {
			continue
		}
		row := []string{strconv.Itoa(z.Size)}
		for s := 100; s >= 10; s -= 10 {
			row = append(row, pointCell(z.LossCurve, func(p result.RFC2544LossPoint) (bool, string, bool) {
				return p.OfferedPercent == float64(s), fmt.Sprintf("%.2f", p.LossPercent), p.HostLimited
			}))
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}

// rfcBackToBackTable has each size's longest clean burst: the figure when
// it is a result, else the bound its bursts support (≥, ≤, a range, or not
// measured; findings.Cell), with no min and max then.
func rfcBackToBackTable(v *result.RFC2544) *Table {
	tb := &Table{Name: result.RFC2544TestBackToBack, Title: "Back-to-back frames (longest burst at line rate with no loss; ≥, ≤ or a range: a bound, not a result)",
		Head: []string{"size (B)", "frames", "line time (µs)", "min", "max", "searches", "at line rate"}}
	for _, z := range v.Sizes {
		bb := z.BackToBack
		if !rfcDone(z, result.RFC2544TestBackToBack) || bb == nil {
			continue
		}
		at := "yes"
		if !bb.AtLineRate {
			at = fmt.Sprintf("no (%.0f %%)", bb.SlowestPercent)
		}
		frames, us, ok := findings.Cell(z, "≥ ", "≤ ", "–")
		lo, hi := "–", "–"
		if ok {
			lo, hi = strconv.FormatInt(bb.MinFrames, 10), strconv.FormatInt(bb.MaxFrames, 10)
		}
		tb.Rows = append(tb.Rows, []string{strconv.Itoa(z.Size), frames, us, lo, hi, strconv.Itoa(len(bb.Searches)), at})
	}
	return tb
}
