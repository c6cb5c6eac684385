package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	sweepfindings "github.com/wirebench/wirebench/internal/sweep/findings"
)

// WriteSweep prints a sweep as a table per size, with the cliffs and
// warnings under it (WriteSweepText without its detail).
func WriteSweep(w io.Writer, r *result.Sweep) error { return WriteSweepText(w, r, false) }

// WriteSweepText prints a sweep as a table per size (a rate that is only a
// bound marked in its cell), with the cliffs under it, then its warnings:
// one line per cause with its count (sweep/findings), and the run's own;
// verbose adds under each cause what it sums up, size by size and trial
// by trial.
func WriteSweepText(w io.Writer, r *result.Sweep, verbose bool) error {
	var b strings.Builder
	t := r.Test
	fmt.Fprintf(&b, "sweep: %s at %s port %d, medium %s, loss ≤ %g %%, ", t.Mode, t.Host, t.Port, t.Medium, t.LossPercent)
	if t.Packets > 0 {
		fmt.Fprintf(&b, "trials of %d datagrams", t.Packets)
	} else {
		fmt.Fprintf(&b, "trials of %g s", t.TrialS)
	}
	if t.ConfirmS > 0 {
		fmt.Fprintf(&b, ", each rate confirmed by a trial of %g s", t.ConfirmS)
	}
	if t.Repeat > 1 {
		fmt.Fprintf(&b, ", %d repetitions (mean ± 95 %% confidence interval)", t.Repeat)
	}
	if t.DUT != "" {
		fmt.Fprintf(&b, ", the device's server started through its shell for every trial (%s dialect)", t.Dialect)
	}
	b.WriteString(";\nthe rate is what the far end delivered (its count over its own receive window), and held for the trial length shown\n")
	rate := "rate (pps)"
	if t.Repeat > 1 {
		rate = "rate (pps) ± 95 % CI"
	}
	fmt.Fprintf(&b, "%-7s %-12s %-22s %-13s %-10s %-9s %-8s %-6s %-9s %s\n", "size", "packets sent", rate, "Mbit/s", "% of line", "loss", "held for", "trials", "rtt (ms)", "note")
	for _, s := range r.Sizes {
		// A size where no rate passed reads "none": its rate lies
		// below the lowest tried, and nothing was confirmed to lose.
		// A rate this host limited is a lower bound: marked ">=".
		rt, mb, bound := "none", "-", ""
		if sweepfindings.LowerBound(s) {
			bound = ">="
		}
		if s.Found {
			rt, mb = fmt.Sprintf("%s%.0f", bound, s.RatePPS), fmt.Sprintf("%s%.2f", bound, s.RateBPS/1e6)
		}
		if s.Repeats != nil && s.Found {
			rt += fmt.Sprintf(" ± %.0f", s.Repeats.CIHighPPS-s.Repeats.MeanPPS)
		}
		pct := "-"
		if s.PercentOfLine != nil {
			pct = fmt.Sprintf("%s%.2f%%", bound, *s.PercentOfLine)
		}
		rtt := "-"
		if s.RTT != nil {
			rtt = fmt.Sprintf("%.3f", s.RTT.Mean)
		}
		loss := "-"
		if s.LossPercent != nil {
			loss = fmt.Sprintf("%.3f%%", *s.LossPercent)
		}
		fmt.Fprintf(&b, "%-7d %-12d %-22s %-13s %-10s %-9s %-8s %-6d %-9s %s\n", s.Size, s.Sent, rt, mb, pct,
			loss, sweepHeldFor(s.HeldS), s.Trials, rtt, sweepSizeNote(s))
	}
	for _, s := range r.Sizes {
		if s.Status == linerate.StatusSuspect {
			fmt.Fprintf(&b, "suspect: %d B: %s\n", s.Size, s.Reason)
		}
	}
	writeSweepCliffs(&b, r)
	if len(r.Cliffs) == 0 && len(r.Sizes) > 1 {
		b.WriteString("no cliff: the byte rate does not fall between neighbouring sizes\n")
	}
	if u := r.Unfinished; u != nil && u.Interrupted {
		n := fmt.Sprintf("%d trials", len(u.TrialLog))
		if len(u.TrialLog) == 1 {
			n = "1 trial"
		}
		fmt.Fprintf(&b, "interrupted: %d B, after %s, its search not finished (no result): %s\n", u.Size, n, sweepTrialList(u.TrialLog))
	} else if u != nil {
		fmt.Fprintf(&b, "unfinished: %d B, after %d trials: %s\n", u.Size, len(u.TrialLog), r.Error)
	}
	for _, f := range sweepfindings.Of(r) {
		fmt.Fprintf(&b, "%s: %s\n", f.Label(), f.Text)
		if verbose {
			for _, d := range f.Detail {
				fmt.Fprintf(&b, "    %s\n", d)
			}
		}
	}
	for _, wng := range sweepfindings.RunWarnings(r) {
		fmt.Fprintf(&b, "warning: %s\n", wng)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSweepCliffs writes a line per cliff: a size where no rate passed
// reads "none" (not 0), and its cliff says how far the rate falls is not
// measured.
func writeSweepCliffs(b *strings.Builder, r *result.Sweep) {
	found := map[int]bool{}
	for _, s := range r.Sizes {
		found[s.Size] = s.Found
	}
	cliffRate := func(size int, pps float64) string {
		if !found[size] && pps == 0 {
			return "none" // no rate passed: below the lowest tried, not 0
		}
		return fmt.Sprintf("%.0f", pps)
	}
	for _, c := range r.Cliffs {
		hint := c.Hint
		if !found[c.Above] && c.RateAbovePPS == 0 {
			// The document's hint reads the missing rate as 0.
			hint = fmt.Sprintf("no rate passed at %d B (its rate lies below the lowest tried), so how far the rate falls is not measured", c.Above)
		}
		fmt.Fprintf(b, "cliff: %d → %d B: %s → %s datagrams/s: %s\n", c.Below, c.Above, cliffRate(c.Below, c.RateBelowPPS), cliffRate(c.Above, c.RateAbovePPS), hint)
	}
}

// sweepHeldFor prints the trial length a rate held for ("10 s"; "-": none).
func sweepHeldFor(s float64) string {
	if s <= 0 {
		return "-"
	}
	return strconv.FormatFloat(math.Round(s*1000)/1000, 'f', -1, 64) + " s"
}

// sweepTrialList lists trials as "rate/s verdict (delivered/s, length)".
func sweepTrialList(log []result.SweepTrial) string {
	var parts []string
	for _, t := range log {
		what := fmt.Sprintf("%.0f/s %s", t.RatePPS, t.Verdict)
		if t.Confirm {
			what = "confirming " + what
		}
		length := fmt.Sprintf("%g s", t.TrialS)
		if t.TrialPackets > 0 {
			length = fmt.Sprintf("%d datagrams", t.TrialPackets)
		}
		parts = append(parts, fmt.Sprintf("%s (delivered %.0f/s, %s)", what, t.DeliveredPPS, length))
	}
	return strings.Join(parts, "; ")
}

// sweepSizeNote is a size's note column.
func sweepSizeNote(s result.SweepSize) string {
	var n []string
	if s.Status == linerate.StatusSuspect {
		n = append(n, "SUSPECT: above what the medium allows")
	}
	switch {
	case s.LimitedByHost && sweepfindings.Unstable(s):
		// One conclusion: repetitions that disagree give no figure.
		n = append(n, "spread too wide, some repetitions limited by this host")
	case s.LimitedByHost:
		n = append(n, "limited by this host")
	}
	if s.AtMax {
		n = append(n, "at the highest rate tried")
	}
	if !s.Confirmed && s.Found { // no rate passed: nothing to confirm
		n = append(n, "unconfirmed")
	}
	if sweepfindings.Unstable(s) && !s.LimitedByHost {
		n = append(n, "spread too wide")
	}
	if s.Bisected {
		n = append(n, "bisected")
	}
	return strings.Join(n, ", ")
}

// WriteSweepCSV prints a sweep as CSV: a header, then one row per size.
func WriteSweepCSV(w io.Writer, r *result.Sweep) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"size", "sent", "rate_pps", "rate_bps", "percent_of_line", "loss_percent", "trials", "rtt_ms",
		"limited_by_host", "confirmed", "bisected", "ci95_low_pps", "ci95_high_pps", "unstable",
		"counted_by", "device_packets", "device_lost", "device_bps", "held_s", "tried_pps", "status", "reason"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, s := range r.Sizes {
		pct, rtt, lo, hi, unstable, loss, rate, bps := "", "", "", "", "", "", "", ""
		if s.Found { // empty where no rate passed: never a measured 0
			rate, bps = f(s.RatePPS), f(s.RateBPS)
		}
		if s.LossPercent != nil {
			loss = f(*s.LossPercent)
		}
		if s.PercentOfLine != nil {
			pct = f(*s.PercentOfLine)
		}
		if s.RTT != nil {
			rtt = f(s.RTT.Mean)
		}
		if s.Repeats != nil {
			lo, hi, unstable = f(s.Repeats.CILowPPS), f(s.Repeats.CIHighPPS), strconv.FormatBool(s.Repeats.Unstable)
		}
		// The device's figures are empty where the firmware prints none.
		dp, dl, db := "", "", ""
		if d := s.Device; d != nil {
			if d.Packets != nil {
				dp = strconv.FormatInt(*d.Packets, 10)
			}
			if d.Lost != nil {
				dl = strconv.FormatInt(*d.Lost, 10)
			}
			if d.BitsPerSecond != nil {
				db = f(*d.BitsPerSecond)
			}
		}
		_ = cw.Write([]string{strconv.Itoa(s.Size), strconv.FormatInt(s.Sent, 10), rate, bps, pct,
			loss, strconv.Itoa(s.Trials), rtt, strconv.FormatBool(s.LimitedByHost), strconv.FormatBool(s.Confirmed),
			strconv.FormatBool(s.Bisected), lo, hi, unstable, s.CountedBy, dp, dl, db, f(s.HeldS), f(s.TriedPPS), s.Status, s.Reason})
	}
	cw.Flush()
	return cw.Error()
}
