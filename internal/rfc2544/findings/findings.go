// Package findings says what an RFC 2544 run's figures are worth: each
// cause of doubt once per run, with its count, under the test whose figures
// it qualifies (the sizes' own warnings, trial by trial, are its detail),
// and what a back-to-back search's bursts bound when this host's sending
// qualifies them. It reads the document only: the run states it, the text
// and HTML reports print it, from new documents and recorded ones alike.
package findings

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// Finding is one cause of doubt over a run, said once.
type Finding struct {
	// Test is the test whose figures it qualifies (result.RFC2544Test…).
	Test string
	// Cause names it: one of the Cause constants, or a size's own warning
	// with its figures masked (the same words at several sizes are one
	// cause).
	Cause string
	// Text is its one line, with its count.
	Text string
	// Detail is what it sums up, size by size and, for trials this host
	// spoiled, trial by trial (--verbose prints it).
	Detail []string
	// Note says the figures stand as shown: what it tells (trials this
	// host spoiled, each run again until a clean one decided) is said
	// for the reader to know, not as a doubt over them; it is shown as a
	// note, not a warning, and is not among the document's warnings.
	Note bool
}

// Label is how the finding is shown: "note" or "warning".
func (f Finding) Label() string {
	if f.Note {
		return "note"
	}
	return "warning"
}

// The causes this package words from the document's own fields.
const (
	CauseStalls      = "throughput_host_stalls"
	CauseHostLimit   = "throughput_host_limit"
	CauseBurstPace   = "backtoback_below_line_rate"
	CauseBurstStalls = "backtoback_host_stalls"
	CauseBurstCapped = "backtoback_capped"
	CauseLossOffered = "loss_host_offered_less"
)

// group gathers one cause over the sizes.
type group struct {
	Finding
	sizes []int
	n     int    // occurrences
	first string // the first size's own words
}

// gather collects a run's causes in the order first seen.
type gather struct {
	order []*group
	by    map[string]*group
}

func (g *gather) get(test, cause string) *group {
	if g.by == nil {
		g.by = map[string]*group{}
	}
	k := test + "\x00" + cause
	if c, ok := g.by[k]; ok {
		return c
	}
	c := &group{Finding: Finding{Test: test, Cause: cause}}
	g.by[k], g.order = c, append(g.order, c)
	return c
}

// add files one of a size's warnings under its cause.
func (g *gather) add(size int, w string) {
	test, cause := classify(w)
	c := g.get(test, cause)
	if !slices.Contains(c.sizes, size) {
		c.sizes = append(c.sizes, size)
	}
	if c.n == 0 {
		c.first = w
	}
	c.n++
	c.Detail = append(c.Detail, fmt.Sprintf("%d B: %s", size, w))
}

var figures = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// classify names a size's warning's test and cause: the causes worded from
// the document's fields by their words (a document's sizes keep the words
// of the run that wrote them), any other by its words with the figures
// masked.
func classify(w string) (test, cause string) {
	switch {
	case strings.HasPrefix(w, "back-to-back"):
		return result.RFC2544TestBackToBack, figures.ReplaceAllString(w, "#")
	case strings.HasPrefix(w, "throughput: ") && strings.Contains(w, "spoiled"):
		return result.RFC2544TestThroughput, CauseStalls
	case strings.Contains(w, "limited by this host"):
		return result.RFC2544TestThroughput, CauseHostLimit
	case strings.HasPrefix(w, "frame loss") && strings.Contains(w, "this host offered"):
		return result.RFC2544TestLoss, CauseLossOffered
	case strings.HasPrefix(w, "frame loss"):
		return result.RFC2544TestLoss, figures.ReplaceAllString(w, "#")
	case strings.HasPrefix(w, "latency"):
		return result.RFC2544TestLatency, figures.ReplaceAllString(w, "#")
	}
	return result.RFC2544TestThroughput, figures.ReplaceAllString(w, "#")
}

// Of is a run's findings, one per cause, in the order of the tests and,
// within a test, of first appearance.
func Of(r *result.RFC2544) []Finding {
	g := &gather{}
	for _, sr := range r.Sizes {
		cause := burstCause(sr)
		for _, w := range sr.Warnings {
			if test, _ := classify(w); test != result.RFC2544TestBackToBack || cause == "" {
				g.add(sr.Size, w)
			}
		}
		if cause != "" && done(sr, result.RFC2544TestBackToBack) {
			// The size's back-to-back words are said from its bound
			// (a document written before the bound was stated says
			// both "an upper bound" and "a lower bound").
			bb := boundOf(sr)
			w := BurstWords(&bb, BurstTries, r.Test.Schedule.MaxBurst)
			if w == "" {
				w = fmt.Sprintf("back-to-back: %d bursts discounted and sent again; a clean try decided each", bb.DiscountedBursts)
			}
			c := g.get(result.RFC2544TestBackToBack, cause)
			c.Detail = append(c.Detail, fmt.Sprintf("%d B: %s", sr.Size, w))
		}
	}
	stalls(g, r)
	hostLimit(g, r)
	bursts(g, r)
	lossOffered(g, r)
	var out []Finding
	for _, test := range []string{result.RFC2544TestThroughput, result.RFC2544TestLatency, result.RFC2544TestLoss, result.RFC2544TestBackToBack} {
		for _, c := range g.order {
			if c.Test != test {
				continue
			}
			if c.Text == "" {
				c.Text = generic(c)
			}
			if c.Text != "" {
				out = append(out, c.Finding)
			}
		}
	}
	return out
}

// generic words a cause the document's fields do not: the first size's
// words, and where else the same came up.
func generic(c *group) string {
	if c.n == 0 {
		return ""
	}
	s := fmt.Sprintf("%d B: %s", c.sizes[0], c.first)
	if c.n > 1 {
		s += fmt.Sprintf(" (the same %d times in all, at %s; --verbose lists each)", c.n, sizeList(c.sizes))
	}
	return s
}

// ForTest is the findings that qualify test's figures.
func ForTest(fs []Finding, test string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Test == test {
			out = append(out, f)
		}
	}
	return out
}

// RunWarnings is the run's warnings that no finding says: the ones of the
// run as a whole (interrupted, the store), not a size's (the run's list
// holds each size's, prefixed with the size, or the findings).
func RunWarnings(r *result.RFC2544, fs []Finding) []string {
	said := map[string]bool{}
	for _, f := range fs {
		said[f.Text] = true
	}
	for _, sr := range r.Sizes {
		for _, w := range sr.Warnings {
			said[fmt.Sprintf("%d B: %s", sr.Size, w)] = true
		}
	}
	var out []string
	for _, w := range r.Warnings {
		if !said[w] {
			said[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Texts is the lines of the findings that are warnings (not notes), for
// the document's run-level warnings.
func Texts(fs []Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		if !f.Note {
			out = append(out, f.Text)
		}
	}
	return out
}

// sizeList is "466 B" or "18, 82 and 466 B".
func sizeList(sizes []int) string {
	ss := make([]string, len(sizes))
	for i, s := range sizes {
		ss[i] = strconv.Itoa(s)
	}
	if len(ss) == 1 {
		return ss[0] + " B"
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1] + " B"
}

// sizesWord is "at 466 B" or "over 6 sizes (18, …, 1472 B)".
func sizesWord(sizes []int) string {
	if len(sizes) == 1 {
		return "at " + sizeList(sizes)
	}
	return fmt.Sprintf("over %d sizes (%s)", len(sizes), sizeList(sizes))
}

// plural is n and its noun, "1 trial" or "37 trials".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
