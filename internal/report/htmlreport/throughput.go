package htmlreport

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/wirebench/wirebench/internal/result"
)

// Series roles in a throughput chart (the data-role of its SVG hooks).
const (
	roleReceived    = "received"         // the receiver's own intervals
	roleOffered     = "offered"          // the sender's intervals: what it offered
	roleReceivedAvg = "received-average" // the receiver's whole-test figure, when it sent no intervals
	roleReverse     = "reverse"
	roleMedium      = "medium"
)

// noReceiverIntervals is the caption of a throughput chart of a flow this
// side sent whose receiver reported no intervals.
const noReceiverIntervals = "the receiver's intervals are unknown (the peer sent no per-interval report): " +
	"the line over time is what the sender offered, not what arrived"

// testEnd is when the test's traffic ended, in seconds from its start
// (+Inf when it ran by amount).
func testEnd(t *result.Result) float64 {
	if t.Test.Duration > 0 {
		return t.Test.Omit + t.Test.Duration
	}
	return math.Inf(1)
}

// steps draws intervals as steps in Mbit/s, none past end: an interval
// starting at or after it is left out, one running over it ends there.
func steps(ivs []result.Interval, end float64) plotter.XYs {
	var xys plotter.XYs
	for _, in := range ivs {
		e := math.Min(in.End, end)
		if e <= in.Start || math.IsNaN(in.BitsPerSecond) {
			continue
		}
		xys = append(xys, plotter.XY{X: in.Start, Y: in.BitsPerSecond / 1e6}, plotter.XY{X: e, Y: in.BitsPerSecond / 1e6})
	}
	return xys
}

// throughputSeries is what a test's throughput chart draws: what the
// receiver got over time (its own intervals: this side's when it
// received, the peer's per-interval report when it sent), the sender's
// offer as a second series, a reverse flow, and the medium's line. When
// this side sent and the receiver's intervals are unknown, it draws the
// offer and the receiver's whole-test figure, and note says so.
func throughputSeries(t *result.Result) (ss []series, note string) {
	end := testEnd(t)
	var main, rev []result.Interval
	sentHere := t.Test.Direction == "send"
	for _, in := range t.Intervals {
		if in.Flow == "reverse" {
			rev = append(rev, in)
			continue
		}
		main = append(main, in)
		sentHere = sentHere || in.MeasuredBy == "sender"
	}
	var received []result.Interval
	switch {
	case t.Receiver != nil && len(t.Receiver.Intervals) > 0:
		received = t.Receiver.Intervals
	case !sentHere:
		received = main
	}
	// The offer first, so that what arrived is drawn over it.
	if sentHere {
		if xys := steps(main, end); len(xys) > 0 {
			ss = append(ss, series{name: "offered (sender)", xys: xys, bare: true, role: roleOffered})
			if len(received) == 0 {
				note = noReceiverIntervals
				if t.Receiver != nil && t.Receiver.BitsPerSecond > 0 {
					ss = append(ss, flatRole("received, whole-test average (receiver's report)", t.Receiver.BitsPerSecond/1e6, ss, roleReceivedAvg))
				}
			}
		}
	}
	if xys := steps(received, end); len(xys) > 0 {
		ss = append(ss, series{name: "received (receiver)", xys: xys, bare: true, role: roleReceived})
		if late := lateShare(received, end); late > 0 {
			note = joinNotes(note, fmt.Sprintf("%.1f %% of the bytes received arrived after the test's end at %g s (queues draining): "+
				"in the receiver's figure, not drawn", late, end))
		}
	}
	if t.Reverse != nil && len(t.Reverse.Intervals) > 0 {
		rev = t.Reverse.Intervals
	}
	if xys := steps(rev, end); len(xys) > 0 {
		name := "reverse flow (received)"
		if t.Reverse != nil && t.Reverse.Direction == "send" {
			name = "reverse flow (sent)"
		}
		ss = append(ss, series{name: name, xys: xys, bare: true, role: roleReverse})
	}
	if t.Link != nil && t.Link.TheoreticalBPS > 0 {
		ss = append(ss, flatRole("medium: "+t.Link.Medium+" theoretical goodput", t.Link.TheoreticalBPS/1e6, ss, roleMedium))
	}
	return ss, note
}

// lateShare is the percentage of the bytes of ivs that arrived after end
// (0 when none did).
func lateShare(ivs []result.Interval, end float64) float64 {
	var all, late float64
	for _, in := range ivs {
		if in.End <= in.Start || !plottable(in.BitsPerSecond) {
			continue
		}
		all += in.BitsPerSecond * (in.End - in.Start)
		if in.End > end {
			late += in.BitsPerSecond * (in.End - math.Max(in.Start, end))
		}
	}
	if all <= 0 || late <= 0 {
		return 0
	}
	return 100 * late / all
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// flatRole is flat with a role.
func flatRole(name string, y float64, ss []series, role string) series {
	f := flat(name, y, ss)
	f.role = role
	return f
}

// throughputPlot is a test's throughput chart (throughputSeries), and the
// caption saying what it cannot show.
func throughputPlot(t *result.Result) (*plot.Plot, string, error) {
	ss, note := throughputSeries(t)
	title := "Throughput over time"
	if strings.HasPrefix(note, noReceiverIntervals) {
		title += " (sender's offer: receiver's intervals unknown)"
	}
	p, err := linesChart(title, "time (s)", "Mbit/s", ss)
	return p, note, err
}

// clipIntervals leaves out what lies past end (see steps).
func clipIntervals(ivs []result.Interval, end float64) []result.Interval {
	var out []result.Interval
	for _, in := range ivs {
		if in.Start < end {
			in.End = math.Min(in.End, end)
			out = append(out, in)
		}
	}
	return out
}
