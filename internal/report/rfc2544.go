package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544/findings"
)

// WriteRFC2544 prints RFC 2544's report layout: what was found first, one
// table per test with the sizes as rows, each followed by the warnings that
// qualify its figures, one line per cause with its count
// (findings.Of); verbose adds under each the sizes' and trials' own words.
// Warnings of the run as a whole come last.
func WriteRFC2544(w io.Writer, r *result.RFC2544, verbose bool) error {
	t := r.Test
	fmt.Fprintf(w, "RFC 2544 benchmark of %s (%s), medium %s, %d sizes", t.Host, t.Mode, t.Medium, len(r.Sizes))
	if t.Strict {
		fmt.Fprint(w, ", strict (RFC 2544's trial lengths)")
	}
	fmt.Fprintf(w, ", %.0f s\n", r.Seconds)
	fs := findings.Of(r)
	for _, test := range []struct {
		name  string
		write func(io.Writer, *result.RFC2544)
	}{{result.RFC2544TestThroughput, writeRFCThroughput}, {result.RFC2544TestLatency, writeRFCLatency},
		{result.RFC2544TestLoss, writeRFCLoss}, {result.RFC2544TestBackToBack, writeRFCBackToBack}} {
		if slices.Contains(t.Tests, test.name) {
			test.write(w, r)
			writeRFCFindings(w, findings.ForTest(fs, test.name), verbose)
		}
	}
	if r.Interrupted {
		fmt.Fprintln(w, "\nInterrupted: only what is shown was finished.")
	}
	if run := findings.RunWarnings(r, fs); len(run) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, s := range run {
			fmt.Fprintf(w, "  - %s\n", s)
		}
	}
	if r.Error != "" {
		fmt.Fprintf(w, "\nError: %s\n", r.Error)
	}
	return nil
}

// writeRFCFindings prints the warnings on a table's figures under it, one
// line per cause, and the notes (figures that stand, said for the reader
// to know); verbose adds what each sums up.
func writeRFCFindings(w io.Writer, fs []findings.Finding, verbose bool) {
	for _, f := range fs {
		fmt.Fprintf(w, "  %s: %s\n", f.Label(), f.Text)
		if verbose {
			for _, d := range f.Detail {
				fmt.Fprintf(w, "      %s\n", d)
			}
		}
	}
}

func rfcTable(w io.Writer, title string) *tabwriter.Writer {
	fmt.Fprintf(w, "\n%s\n", title)
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

func rfcDone(sr result.RFC2544Size, test string) bool { return slices.Contains(sr.Done, test) }

func writeRFCThroughput(w io.Writer, r *result.RFC2544) {
	tw := rfcTable(w, fmt.Sprintf("Throughput (NDR: no loss; PDR: loss <= %g %%; the rate the far end delivered, held for the confirming trial)", r.Test.PDRPercent))
	fmt.Fprintln(tw, "size B\tNDR pkt/s\tNDR Mbit/s\t% of line\tPDR pkt/s\tPDR Mbit/s\tPDR loss %\theld s\t")
	unconfirmed := false
	for _, sr := range r.Sizes {
		if !rfcDone(sr, result.RFC2544TestThroughput) {
			continue
		}
		ndr := rfcRateCells(sr.NDRPPS, sr.NDRBPS, sr.LinePPS, sr.NDR, r.Test.Schedule.ConfirmS, &unconfirmed)
		pdr := rfcRateCells(sr.PDRPPS, sr.PDRBPS, sr.LinePPS, sr.PDR, r.Test.Schedule.ConfirmS, &unconfirmed)
		loss, held := "-", "-"
		if sr.PDR != nil && sr.PDRPPS > 0 && sr.PDR.LossPercent != nil {
			loss = fmt.Sprintf("%.3f", *sr.PDR.LossPercent)
		}
		if sr.NDR != nil && sr.NDRPPS > 0 {
			held = fmt.Sprintf("%g", sr.NDR.HeldS)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", sr.Size, ndr[0], ndr[1], ndr[2], pdr[0], pdr[1], loss, held)
	}
	tw.Flush()
	if unconfirmed {
		fmt.Fprintln(w, "  * not confirmed: no trial of the confirming length passed at this rate (see the warnings)")
	}
}

// rfcRateCells formats a throughput rate's packet rate, Mbit/s and share of
// the line: "none" when no rate passed (not 0: the rate is below the lowest
// tried, not zero), a "*" on a rate that did not hold for a confirming
// trial of confirmS, and ">=" on a rate that is this host's limit (a lower
// bound of the far end's).
func rfcRateCells(pps, bps, linePPS float64, sr *result.SweepSize, confirmS float64, unconfirmed *bool) [3]string {
	if sr == nil || !(pps > 0) {
		return [3]string{"none", "-", "-"}
	}
	mark := ""
	if confirmS > 0 && sr.HeldS < confirmS {
		mark, *unconfirmed = "*", true
	}
	bound := ""
	if sr.LimitedByHost {
		bound = ">="
	}
	pct := "-"
	if linePPS > 0 {
		pct = fmt.Sprintf("%s%.1f", bound, 100*pps/linePPS)
	}
	return [3]string{fmt.Sprintf("%s%.0f%s", bound, pps, mark), fmt.Sprintf("%s%.3f%s", bound, bps/1e6, mark), pct}
}

// rfcLatencyTitles name what the latency table holds, by kind.
var rfcLatencyTitles = map[string]string{
	result.RFC2544RoundTrip:      "Latency at load (round trip, ms: p50 / p99 / max at each share of the NDR)",
	result.RFC2544OneWay:         "Latency at load (one way, same clock, ms: p50 / p99 / max at each share of the NDR)",
	result.RFC2544DelayVariation: "Delay variation at load (NOT latency: ms above each trial's fastest datagram, clocks not shared: p50 / p99 / max at each share of the NDR)",
}

func writeRFCLatency(w io.Writer, r *result.RFC2544) {
	title := rfcLatencyTitles[result.RFC2544RoundTrip]
	for _, sr := range r.Sizes {
		if len(sr.Latency) > 0 {
			title = rfcLatencyTitles[sr.Latency[0].Kind]
			break
		}
	}
	tw := rfcTable(w, title)
	head := "size B\t"
	for _, l := range r.Test.Loads {
		head += fmt.Sprintf("%g %%\t", l)
	}
	fmt.Fprintln(tw, head)
	var notes []string
	for _, sr := range r.Sizes {
		if !rfcDone(sr, result.RFC2544TestLatency) {
			continue
		}
		if len(sr.Latency) == 0 {
			// Why is the size's warning, said once under the table.
			fmt.Fprintf(tw, "%d\tnot measured\t\n", sr.Size)
			continue
		}
		if sr.Latency[0].Kind != result.RFC2544RoundTrip {
			notes = append(notes, sr.LatencyNote)
		}
		row := strconv.Itoa(sr.Size) + "\t"
		for _, p := range sr.Latency {
			row += fmt.Sprintf("%.3f / %.3f / %.3f\t", p.P50MS, p.P99MS, p.MaxMS)
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	for _, n := range slices.Compact(notes) {
		fmt.Fprintf(w, "  %s\n", n)
	}
	if r.Test.ClockWhy != "" {
		fmt.Fprintf(w, "  clock: %s (%s)\n", r.Test.Clock, r.Test.ClockWhy)
	}
}

func writeRFCLoss(w io.Writer, r *result.RFC2544) {
	tw := rfcTable(w, "Frame loss rate (% lost at each share of the medium's maximum rate)")
	head := "size B\t"
	for s := 100; s >= 10; s -= 10 {
		head += fmt.Sprintf("%d %%\t", s)
	}
	fmt.Fprintln(tw, head)
	for _, sr := range r.Sizes {
		if !rfcDone(sr, result.RFC2544TestLoss) {
			continue
		}
		row := strconv.Itoa(sr.Size) + "\t"
		for s := 100; s >= 10; s -= 10 {
			cell := "-"
			for _, p := range sr.LossCurve {
				if int(p.OfferedPercent) == s {
					cell = fmt.Sprintf("%.2f", p.LossPercent)
					if p.HostLimited {
						cell += "*"
					}
				}
			}
			row += cell + "\t"
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	fmt.Fprintln(w, "  (* this host sent less than asked: the loss is at the rate it offered; - not run: two steps above lost nothing)")
}

// writeRFCBackToBack prints each size's longest clean burst: the figure
// when it is a result, else the bound its bursts support (>=, <=, a range
// or "not measured"; findings.Cell), with no min and max then.
func writeRFCBackToBack(w io.Writer, r *result.RFC2544) {
	tw := rfcTable(w, "Back-to-back frames (longest burst at line rate with no loss; >=, <= or a range: a bound, not a result)")
	fmt.Fprintln(tw, "size B\tframes\tline time us\tmin\tmax\tsearches\tat line rate\t")
	for _, sr := range r.Sizes {
		if !rfcDone(sr, result.RFC2544TestBackToBack) || sr.BackToBack == nil {
			continue
		}
		bb := sr.BackToBack
		at := "yes"
		if !bb.AtLineRate {
			at = fmt.Sprintf("no (%.0f %%)", bb.SlowestPercent)
		}
		frames, us, ok := findings.Cell(sr, ">=", "<=", "-")
		lo, hi := "-", "-"
		if ok {
			lo, hi = strconv.FormatInt(bb.MinFrames, 10), strconv.FormatInt(bb.MaxFrames, 10)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t\n", sr.Size, frames, us, lo, hi, len(bb.Searches), at)
	}
	tw.Flush()
}

// WriteRFC2544CSV prints one row per figure: test, size, the point (a load or an
// offered share, empty for none), the metric and its value.
func WriteRFC2544CSV(w io.Writer, r *result.RFC2544) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"test", "size", "point_percent", "metric", "value"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	row := func(test string, size int, point, metric string, v float64) {
		_ = cw.Write([]string{test, strconv.Itoa(size), point, metric, f(v)})
	}
	for _, sr := range r.Sizes {
		if rfcDone(sr, result.RFC2544TestThroughput) {
			// A rate not found has an empty value: no rate tried
			// passed, and 0 was never measured.
			rate := func(metric string, v float64, found bool) {
				if !found {
					_ = cw.Write([]string{result.RFC2544TestThroughput, strconv.Itoa(sr.Size), "", metric, ""})
					return
				}
				row(result.RFC2544TestThroughput, sr.Size, "", metric, v)
			}
			rate("ndr_pps", sr.NDRPPS, sr.NDRFound)
			rate("ndr_bps", sr.NDRBPS, sr.NDRFound)
			rate("pdr_pps", sr.PDRPPS, sr.PDRFound)
			rate("pdr_bps", sr.PDRBPS, sr.PDRFound)
			if sr.DiscountedTrials > 0 {
				// Trials this host spoiled, not counted as the far
				// end's loss (only when there were any).
				row(result.RFC2544TestThroughput, sr.Size, "", "discounted_trials", float64(sr.DiscountedTrials))
			}
		}
		for _, p := range sr.Latency {
			// One-way and delay-variation figures are named for what
			// they are; round trips keep the plain names.
			pre := ""
			if p.Kind != result.RFC2544RoundTrip {
				pre = p.Kind + "_"
			}
			for _, m := range []struct {
				n string
				v float64
			}{{"min_ms", p.MinMS}, {"p50_ms", p.P50MS}, {"p90_ms", p.P90MS}, {"p99_ms", p.P99MS}, {"p99_9_ms", p.P999MS}, {"max_ms", p.MaxMS}} {
				row(result.RFC2544TestLatency, sr.Size, f(p.LoadPercent), pre+m.n, m.v)
			}
		}
		for _, p := range sr.LossCurve {
			row(result.RFC2544TestLoss, sr.Size, f(p.OfferedPercent), "offered_pps", p.OfferedPPS)
			row(result.RFC2544TestLoss, sr.Size, f(p.OfferedPercent), "loss_percent", p.LossPercent)
		}
		if sr.BackToBack != nil {
			row(result.RFC2544TestBackToBack, sr.Size, "", "frames", sr.BackToBackFrames)
			row(result.RFC2544TestBackToBack, sr.Size, "", "us", sr.BackToBackUS)
		}
	}
	cw.Flush()
	return cw.Error()
}

// RFC2544Summary is the one line the results store's history shows.
func RFC2544Summary(r *result.RFC2544) string {
	s := fmt.Sprintf("rfc2544 %s, %d sizes, %s", r.Test.Mode, len(r.Sizes), strings.Join(r.Test.Tests, ","))
	if r.Interrupted {
		s += ", interrupted"
	}
	return s
}
