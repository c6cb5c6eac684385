// Package findings says what a sweep's figures are worth, as the
// RFC 2544 findings do for an RFC 2544 run: each cause of doubt once per
// run, with its count (how many sizes and trials it touched), where the
// sizes' own warnings and the trial log said it size by size and trial by
// trial; those are its detail (the text's --verbose). It reads the
// document only, so the text says the same of new runs and recorded ones.
package findings

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// Finding is one cause of doubt over a sweep, said once.
type Finding struct {
	// Cause names it: one of the Cause constants, or a size's own
	// warning with its figures masked (the same words at several sizes
	// are one cause).
	Cause string
	// Text is its one line, with its count.
	Text string
	// Detail is what it sums up, size by size or trial by trial.
	Detail []string
	// Note says the figures stand as shown: what it tells (trials this
	// host spoiled, each run again until a clean one decided) is said
	// for the reader to know, not as a doubt over them; it is shown as a
	// note, not a warning.
	Note bool
}

// Label is how the finding is shown: "note" or "warning".
func (f Finding) Label() string {
	if f.Note {
		return "note"
	}
	return "warning"
}

// The causes worded from the document's fields.
const (
	CauseSpoiled     = "host_spoiled_trials"
	CauseHostDrops   = "host_socket_drops"
	CauseLimited     = "limited_by_host"
	CauseUnconfirmed = "unconfirmed"
	CauseUnstable    = "repeats_unstable"
	CauseNone        = "no_rate_passed"
	CauseLocalRecv   = "local_receiver_overflow"
)

// LocalReceiverWords begin a trial's warning that the receiver, on this
// host, had no room in its socket for datagrams it counted lost (the
// words of hostdrops.Drops.ReceiverOverflow).
const LocalReceiverWords = "the receiver is on this host, and this host's UDP receive buffers overflowed"

// Trial verdicts this host spoiled (the sweep package's VerdictHost and
// VerdictStall).
const (
	verdictHost  = "host_limited"
	verdictStall = "host_stalled"
)

// Trial verdicts that are the far end's failure (the sweep package's
// VerdictLoss and VerdictPace).
const (
	verdictLoss = "loss"
	verdictPace = "backlog"
)

// fieldWords are the size warnings the fields below say: their causes'
// lines replace them.
var fieldWords = []string{"limited by this host", "no confirming trial passed", "no rate passed",
	"repetitions spread too widely", "our own socket dropped"}

var figures = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// Of is a sweep's findings, one per cause: those worded from its fields
// first, then its sizes' other warnings grouped by their words.
func Of(r *result.Sweep) []Finding {
	var out []Finding
	for _, f := range []func(*result.Sweep) (Finding, bool){spoiled, hostDrops, localReceiver, limited, nonePassed, unconfirmed, unstable} {
		if f, ok := f(r); ok {
			out = append(out, f)
		}
	}
	return append(out, others(r)...)
}

// RunWarnings are the run's own warnings: those not repeating a size's
// ("SIZE B: …", which Of says once per cause).
func RunWarnings(r *result.Sweep) []string {
	var out []string
	for _, w := range r.Warnings {
		if !isSizeWarning(r, w) {
			out = append(out, w)
		}
	}
	return out
}

// isSizeWarning says whether w is one of a size's warnings as the run's
// list repeats it ("SIZE B: WARNING").
func isSizeWarning(r *result.Sweep, w string) bool {
	for _, sr := range r.Sizes {
		p := strconv.Itoa(sr.Size) + " B: "
		if !strings.HasPrefix(w, p) {
			continue
		}
		for _, sw := range sr.Warnings {
			if w[len(p):] == sw {
				return true
			}
		}
	}
	return false
}

// spoiled words the trials this host spoiled: its sender stalled and
// caught up in a burst, or did not offer the rate (host_stalled,
// host_limited); each trial is detail.
func spoiled(r *result.Sweep) (Finding, bool) {
	f := Finding{Cause: CauseSpoiled}
	var sizes []int
	var stalled, short int
	for _, sr := range r.Sizes {
		n := 0
		for _, t := range sr.TrialLog {
			if t.Verdict != verdictStall && t.Verdict != verdictHost {
				continue
			}
			n++
			if t.Verdict == verdictStall {
				stalled++
			} else {
				short++
			}
			f.Detail = append(f.Detail, fmt.Sprintf("%d B: trial at %.0f/s: %s (sent %d at %.0f/s, lost %d, our sender up to %.1f ms behind)",
				sr.Size, t.RatePPS, strings.ReplaceAll(t.Verdict, "_", " "), t.Sent, t.OfferedPPS, t.Lost, t.MaxLagS*1e3))
		}
		if n > 0 {
			sizes = append(sizes, sr.Size)
		}
	}
	if stalled+short == 0 {
		return f, false
	}
	var what []string
	if stalled > 0 {
		what = append(what, fmt.Sprintf("%d failed while our sender stalled and caught up in a burst", stalled))
	}
	if short > 0 {
		verb := "were"
		if short == 1 {
			verb = "was"
		}
		what = append(what, fmt.Sprintf("%d %s not sent or received at the rate asked", short, verb))
	}
	if allImmaterial(r) {
		f.Text, f.Note = fmt.Sprintf("this host spoiled %s %s: %s; each was run again until a clean run decided its rate, or lay above a rate the far end failed, so the figures stand (--verbose lists each trial)",
			plural(stalled+short, "trial"), sizesWord(sizes), strings.Join(what, ", ")), true
		return f, true
	}
	f.Text = fmt.Sprintf("this host spoiled %s %s: %s; none counts as the far end's failure, and the search went on without them; a quieter host tests them (--verbose lists each trial)",
		plural(stalled+short, "trial"), sizesWord(sizes), strings.Join(what, ", "))
	return f, true
}

// allImmaterial says whether none of the trials this host spoiled bears
// on the figures: each lay above a rate the far end failed in its search
// (loss or backlog: what this host could not test there is no longer in
// question), or, spoiled by a stall (host_stalled), was followed in its
// search by a trial of the same rate and length that was not (a clean run
// decided the rate).
func allImmaterial(r *result.Sweep) bool {
	for _, sr := range r.Sizes {
		log := sr.TrialLog
		failed := map[int]float64{} // the lowest rate the far end failed, per repeat
		for _, t := range log {
			if (t.Verdict == verdictLoss || t.Verdict == verdictPace) && (failed[t.Repeat] == 0 || t.RatePPS < failed[t.Repeat]) {
				failed[t.Repeat] = t.RatePPS
			}
		}
		for i, t := range log {
			if t.Verdict != verdictStall && t.Verdict != verdictHost || failed[t.Repeat] > 0 && t.RatePPS > failed[t.Repeat] {
				continue
			}
			if t.Verdict == verdictHost {
				return false
			}
			j := i + 1
			for j < len(log) && log[j].Verdict == verdictStall && sameTrial(log[j], t) {
				j++
			}
			if j == len(log) || !sameTrial(log[j], t) || log[j].Verdict == verdictHost {
				return false
			}
		}
	}
	return true
}

// sameTrial says whether a and b are one search's trials of the same rate
// and length: a trial and its re-run.
func sameTrial(a, b result.SweepTrial) bool {
	return a.Repeat == b.Repeat && a.RatePPS == b.RatePPS && a.TrialS == b.TrialS && a.TrialPackets == b.TrialPackets
}

// trialsWhere walks the trial log: detail words a trial of size sr that
// bears the cause ("" for one that does not), and n is how much of it the
// trial counts. It returns the finding's detail, the sizes with such a
// trial, how many trials, and the sum of n.
func trialsWhere(r *result.Sweep, detail func(sr result.SweepSize, t result.SweepTrial) (string, int64)) (lines []string, sizes []int, trials int, sum int64) {
	for _, sr := range r.Sizes {
		before := trials
		for _, t := range sr.TrialLog {
			if d, n := detail(sr, t); d != "" {
				lines, trials, sum = append(lines, d), trials+1, sum+n
			}
		}
		if trials > before {
			sizes = append(sizes, sr.Size)
		}
	}
	return lines, sizes, trials, sum
}

// localReceiver words the trials whose receiver, on this host, had no room
// in its socket for what it counted lost: the loss is a program of this
// host falling behind, which the table's rates (or its "none") measure.
// Each trial's own words (the detail) give its counts; the line gives no
// sum, as the counter is host-wide and bounds each trial's loss apart.
func localReceiver(r *result.Sweep) (Finding, bool) {
	detail, sizes, trials, _ := trialsWhere(r, func(sr result.SweepSize, t result.SweepTrial) (string, int64) {
		for _, w := range t.Warnings {
			if strings.HasPrefix(w, LocalReceiverWords) {
				return fmt.Sprintf("%d B: a trial at %.0f/s: %s", sr.Size, t.RatePPS, w), 0
			}
		}
		return "", 0
	})
	if trials == 0 {
		return Finding{}, false
	}
	return Finding{Cause: CauseLocalRecv, Detail: detail, Text: fmt.Sprintf("the receiver is on this host, and its socket's buffer overflowed in %s %s "+
		"(each trial's count with -V): loss there is this host's receiving program falling behind, not the path's or a far end's limit; "+
		"give it a larger buffer (iperf -w) or measure a receiver elsewhere", plural(trials, "trial"), sizesWord(sizes))}, true
}

// hostDrops words the trials in which our own socket dropped datagrams.
func hostDrops(r *result.Sweep) (Finding, bool) {
	detail, sizes, trials, drops := trialsWhere(r, func(sr result.SweepSize, t result.SweepTrial) (string, int64) {
		if t.HostDrops <= 0 {
			return "", 0
		}
		return fmt.Sprintf("%d B: our own socket dropped %d datagrams in a trial at %.0f/s", sr.Size, t.HostDrops, t.RatePPS), t.HostDrops
	})
	if trials == 0 {
		return Finding{}, false
	}
	return Finding{Cause: CauseHostDrops, Detail: detail, Text: fmt.Sprintf("our own socket dropped %d datagrams in %s %s (host-side, counted as lost; a trial that lost them counts as this host's failure, not the far end's)",
		drops, plural(trials, "trial"), sizesWord(sizes))}, true
}

// sizesWhere words the sizes where keep holds, one cause: the line is
// text(count of sizes, "at 18, 64 B"); each size's detail is its own
// words of the cause.
func sizesWhere(r *result.Sweep, cause string, keep func(result.SweepSize) bool, words []string, text func(n int, at string) string) (Finding, bool) {
	f := Finding{Cause: cause}
	var sizes []int
	for _, sr := range r.Sizes {
		if !keep(sr) {
			continue
		}
		sizes = append(sizes, sr.Size)
		for _, w := range sr.Warnings {
			for _, ws := range words {
				if strings.Contains(w, ws) {
					f.Detail = append(f.Detail, fmt.Sprintf("%d B: %s", sr.Size, w))
					break
				}
			}
		}
	}
	if len(sizes) == 0 {
		return f, false
	}
	f.Text = text(len(sizes), sizesWord(sizes))
	return f, true
}

// LowerBound says whether size sr's rate is a lower bound: this host
// could not offer a higher rate, and the rate is the size's one figure (a
// size whose repetitions spread too widely, some of them limited by this
// host and some not, has none: it is said unstable instead).
func LowerBound(sr result.SweepSize) bool {
	return sr.LimitedByHost && sr.Found && !Unstable(sr)
}

// Unstable says whether size sr's repetitions spread too widely to trust
// their mean (or disagree on whether this host limited them).
func Unstable(sr result.SweepSize) bool { return sr.Repeats != nil && sr.Repeats.Unstable }

// limited words the sizes this host could not test to the far end's
// limit: their rates are lower bounds (a size where no rate passed says
// that instead: a lower bound of nothing is no conclusion).
func limited(r *result.Sweep) (Finding, bool) {
	var brief []int
	for _, sr := range r.Sizes {
		if LowerBound(sr) && !sr.Confirmed {
			brief = append(brief, sr.Size)
		}
	}
	return sizesWhere(r, CauseLimited, LowerBound, []string{"limited by this host", "no confirming trial passed"},
		func(n int, at string) string {
			what := "their rates are lower bounds"
			if n == 1 {
				what = "its rate is a lower bound"
			}
			s := fmt.Sprintf("this host could not offer a higher rate %s: the far end's limit was not reached, so %s (>= in the table), not the far end's figures", at, what)
			switch {
			case len(brief) == n && n == 1:
				s += "; no confirming trial passed: the bound held for a search trial only"
			case len(brief) == n:
				s += "; no confirming trial passed at any: each bound held for a search trial only"
			case len(brief) > 0:
				s += fmt.Sprintf("; no confirming trial passed %s: the bound held for a search trial only", sizesWord(brief))
			}
			return s
		})
}

// nonePassed words the sizes where no rate passed.
func nonePassed(r *result.Sweep) (Finding, bool) {
	// Its "unconfirmed" words (held for 0 s) are no conclusion: left out.
	return sizesWhere(r, CauseNone, func(sr result.SweepSize) bool { return !sr.Found }, []string{"no rate passed"},
		func(n int, at string) string {
			return fmt.Sprintf("no rate passed %s: the rate lies below the lowest tried (none in the table)", at)
		})
}

// unconfirmed words the sizes whose rate no confirming trial held.
func unconfirmed(r *result.Sweep) (Finding, bool) {
	// A size where no rate passed has no rate to confirm, and a lower
	// bound says it with its own line: one conclusion per size.
	return sizesWhere(r, CauseUnconfirmed, func(sr result.SweepSize) bool { return sr.Found && !sr.Confirmed && !LowerBound(sr) }, []string{"no confirming trial passed"},
		func(n int, at string) string {
			return fmt.Sprintf("no confirming trial passed within the trial budget %s: the rate shown is the best seen, held for a search trial only (unconfirmed in the table, with the length it held for)", at)
		})
}

// unstable words the sizes whose repetitions spread too widely.
func unstable(r *result.Sweep) (Finding, bool) {
	some := false
	for _, sr := range r.Sizes {
		some = some || Unstable(sr) && sr.LimitedByHost
	}
	return sizesWhere(r, CauseUnstable, Unstable, []string{"spread too widely"},
		func(n int, at string) string {
			s := fmt.Sprintf("the repetitions spread too widely to trust the mean %s (spread too wide in the table; each size's interval in the JSON)", at)
			if some {
				s += "; where some repetitions were limited by this host and others not, the size has no figure, neither the mean nor a bound: a quieter host tests it"
			}
			return s
		})
}

// others groups the sizes' warnings the fields do not say (nor a suspect
// size's reason, which the table's "suspect:" line under it says), by their
// words with the figures masked: the first size's words, then the other
// sizes that said the same.
func others(r *result.Sweep) []Finding {
	var out []Finding
	at := map[string]int{}
	var sizes [][]int
	for _, sr := range r.Sizes {
		for _, w := range sr.Warnings {
			if saidByFields(w) || sr.Status == "suspect" && w == sr.Reason {
				continue // a field says it; a suspect size has its own line
			}
			k := figures.ReplaceAllString(w, "#")
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, Finding{Cause: k, Text: w})
				sizes = append(sizes, nil)
			}
			if n := len(sizes[i]); n == 0 || sizes[i][n-1] != sr.Size {
				sizes[i] = append(sizes[i], sr.Size)
			}
			out[i].Detail = append(out[i].Detail, fmt.Sprintf("%d B: %s", sr.Size, w))
		}
	}
	for i := range out {
		out[i].Text = fmt.Sprintf("%d B: %s", sizes[i][0], out[i].Text)
		if n := len(sizes[i]); n > 1 {
			out[i].Text += fmt.Sprintf(" (and the same %s; --verbose lists each)", sizesWord(sizes[i][1:]))
		}
	}
	return out
}

// saidByFields says whether a size's warning is one a field says.
func saidByFields(w string) bool {
	for _, s := range fieldWords {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// sizesWord is "at 18 B" or "at 3 sizes (18, 64, 128 B)".
func sizesWord(sizes []int) string {
	ss := make([]string, len(sizes))
	for i, s := range sizes {
		ss[i] = strconv.Itoa(s)
	}
	if len(sizes) == 1 {
		return "at " + ss[0] + " B"
	}
	return fmt.Sprintf("at %d sizes (%s B)", len(sizes), strings.Join(ss, ", "))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
