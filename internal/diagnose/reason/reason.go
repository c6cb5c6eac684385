// Package reason is a diagnosis's reasoning: from the runs of a diagnosis
// (result.DiagnosisRun: per run its size, the rate asked, sent and
// delivered, its loss, round trips and the timer tick its arrivals
// followed) it reaches what limits the link, as findings with their
// figures, a confidence and the runs that are their evidence, and says
// what the runs cannot tell apart. It measures nothing and does no I/O, so
// it is tested on recorded runs; internal/diagnose plans and runs them.
//
// The rules, and what each cannot tell apart, are in docs/diagnose.md.
package reason

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
)

// Thresholds of the rules (docs/diagnose.md).
const (
	// LimitedShare: a load run whose far end delivered under this share of
	// what we sent hit a limit.
	LimitedShare = 0.95
	// FlatTolerance: rates within this share of their highest are flat.
	FlatTolerance = 0.03
	// MediumShare: a delivered rate at or above this share of the medium's
	// is the medium's limit.
	MediumShare = 0.98
	// HostShare: a sender that offered under this share of the rate asked
	// could not go faster.
	HostShare = 0.97
	// CliffDrop: a fall of the byte rate by more than this share from one
	// size to the next larger one is a cliff.
	CliffDrop = 0.2
	// MinQueueMs is the least queue worth a finding.
	MinQueueMs = 2.0
	// FloorLoss is the least loss (percent) at a low rate, with at least
	// FloorLost datagrams lost, that makes a loss floor.
	FloorLoss = 0.1
	FloorLost = 5
)

// Input is what the reasoning works on.
type Input struct {
	// Medium is --medium: its framing turns packet rates into line bit
	// rates, its rate is what "the medium is the limit" compares with.
	Medium linerate.Medium
	Runs   []result.DiagnosisRun
	// Unseen is what the far end cannot show at all (a device's shell
	// times no round trips), said after the rules' own as what the runs
	// cannot tell.
	Unseen []string
}

// Outcome is what the reasoning reached.
type Outcome struct {
	Verdict    string
	Findings   []result.DiagnosisFinding
	CannotTell []string
}

// reasoner carries one reasoning under way.
type reasoner struct {
	in   Input
	out  Outcome
	line map[int]linerate.Breakdown
	// limit is the headline finding's kind and its sentence for the verdict.
	limit struct {
		kind, text string
		runs       []int
		// detail is what the evidence runs show, after their ids.
		detail string
	}
}

// Reason reaches the findings of in's runs.
func Reason(in Input) Outcome {
	r := &reasoner{in: in, line: map[int]linerate.Breakdown{}}
	r.out.Findings = []result.DiagnosisFinding{}
	r.out.CannotTell = []string{}
	r.rateLimit()
	r.cliffs()
	r.sizeLimit()
	r.lossFloor()
	r.queue()
	r.direction()
	r.tcp()
	r.out.CannotTell = append(r.out.CannotTell, r.in.Unseen...)
	r.out.Verdict = r.verdict()
	return r.out
}

// add records a finding.
func (r *reasoner) add(kind, confidence string, figures map[string]float64, runs []int, text string) *result.DiagnosisFinding {
	slices.Sort(runs)
	r.out.Findings = append(r.out.Findings, result.DiagnosisFinding{Kind: kind, Confidence: confidence,
		Figures: figures, EvidenceRuns: slices.Compact(runs), Text: text})
	return &r.out.Findings[len(r.out.Findings)-1]
}

// cannot records what the runs cannot tell.
func (r *reasoner) cannot(format string, args ...any) {
	r.out.CannotTell = append(r.out.CannotTell, fmt.Sprintf(format, args...))
}

// find returns the first finding of kind, nil when there is none.
func (r *reasoner) find(kind string) *result.DiagnosisFinding {
	for i := range r.out.Findings {
		if r.out.Findings[i].Kind == kind {
			return &r.out.Findings[i]
		}
	}
	return nil
}

// breakdown is the medium's line model of a datagram of size bytes; ok is
// false when the medium cannot carry it.
func (r *reasoner) breakdown(size int) (linerate.Breakdown, bool) {
	if b, ok := r.line[size]; ok {
		return b, b.WireBits > 0
	}
	b, err := linerate.Analyze(r.in.Medium, linerate.Stack{Transport: linerate.UDP}, size)
	if err != nil {
		b = linerate.Breakdown{}
	}
	r.line[size] = b
	return b, b.WireBits > 0
}

// lineBPS is a rate of size-byte datagrams in bit/s on the medium's
// framing (as calc and the lab's rate= count it).
func (r *reasoner) lineBPS(size int, pps float64) float64 {
	b, ok := r.breakdown(size)
	if !ok {
		return pps * float64(size+28) * 8
	}
	return pps * b.WireBits
}

// verdict is the paragraph: the limit, then the other findings, then the
// evidence.
func (r *reasoner) verdict() string {
	var b strings.Builder
	b.WriteString("Verdict: ")
	if r.limit.text == "" {
		b.WriteString("no limit could be told from these runs")
		if len(r.out.CannotTell) > 0 {
			b.WriteString(": " + r.out.CannotTell[0])
		}
		b.WriteString(".")
	} else {
		b.WriteString(r.limit.text)
	}
	for _, f := range r.out.Findings {
		switch f.Kind {
		case result.FindingSizeLimit, result.FindingLossFloor, result.FindingQueue, result.FindingDirection, result.FindingTCPBelowUDP:
			b.WriteString(" " + f.Text)
		case result.FindingSizeCliff:
			if r.limit.kind != result.FindingSizeCliff {
				b.WriteString(" " + f.Text)
			}
		}
	}
	if len(r.limit.runs) > 0 {
		b.WriteString("\nEvidence: " + RunRanges(r.limit.runs))
		if r.limit.detail != "" {
			b.WriteString(" (" + r.limit.detail + ")")
		}
		b.WriteString(".")
	}
	return b.String()
}

// RunRanges spells run ids as "runs 3-5, 9" ("run 4" for one).
func RunRanges(ids []int) string {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, fmt.Sprint(ids[i]))
		}
		i = j + 1
	}
	if len(ids) == 1 {
		return "run " + parts[0]
	}
	return "runs " + strings.Join(parts, ", ")
}

// num spells a figure with thousands separators and no decimals.
func num(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// mbitRange spells two bit rates as one range in Mbit/s.
func mbitRange(lo, hi float64) string {
	f := "%.1f-%.1f Mbit/s"
	if hi < 10e6 {
		f = "%.2f-%.2f Mbit/s"
	}
	return fmt.Sprintf(f, lo/1e6, hi/1e6)
}

// mbit spells a bit rate in Mbit/s.
func mbit(bps float64) string {
	if bps < 10e6 {
		return fmt.Sprintf("%.2f Mbit/s", bps/1e6)
	}
	return fmt.Sprintf("%.1f Mbit/s", bps/1e6)
}
