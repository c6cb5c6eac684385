package htmlreport

import (
	"math"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
)

// cellTimeChart is one protocol's throughput-over-time chart of a matrix:
// its title, its series (one per cell and flow) and a caption saying what
// it cannot show.
type cellTimeChart struct {
	title string
	ss    []series
	note  string
}

// cellSeries is what a cell's time chart draws: what the receiver got, by
// its intervals when it reported them (the peer's per-interval report, for
// a cell this side sent), else the cell's own intervals, none past the
// test's end. offerOnly is set when the cell sent and the receiver's
// intervals are unknown: its own intervals are then the sender's offer,
// and its series (but a bidirectional cell's reverse flow, which this
// side received) are named so.
func cellSeries(c result.MatrixCell) (ss []series, offerOnly bool) {
	t := c.Result
	ivs := t.Intervals
	if t.Receiver != nil && len(t.Receiver.Intervals) > 0 {
		ivs = t.Receiver.Intervals
	} else {
		offerOnly = t.Test.Direction == "send"
		for _, in := range t.Intervals {
			offerOnly = offerOnly || (in.MeasuredBy == "sender" && in.Flow != "reverse")
		}
	}
	ss = intervalSeries(c.Name(), ownTimeAxis(t, ivs))
	drawnOffer := false
	for i := range ss {
		switch {
		case strings.HasSuffix(ss[i].name, " reverse"):
			ss[i].role = roleReverse // what came back: received here
		case offerOnly:
			ss[i].name += ", sender's offer"
			ss[i].role = roleOffered
			drawnOffer = true
		default:
			ss[i].role = roleReceived
		}
	}
	return ss, drawnOffer
}

// ownTimeAxis puts a cell's intervals on the cell's own time axis, none
// past its end. A tradeoff test (iperf 2's -r, the download cell of an
// iperf2-legacy matrix) runs its reverse flow after the forward one: the
// peer connects back when the forward test ends, so that flow's intervals
// start at the forward test's end. They are drawn from that end, so both
// flows show their whole test (each clipped at its own end) instead of
// the reverse one being cut off at the forward test's end.
func ownTimeAxis(t *result.Result, ivs []result.Interval) []result.Interval {
	end := testEnd(t)
	if t.Test.Mode != "tradeoff" || math.IsInf(end, 0) {
		return clipIntervals(ivs, end)
	}
	var fwd, rev []result.Interval
	for _, in := range ivs {
		if in.Flow != "reverse" {
			fwd = append(fwd, in)
			continue
		}
		if in.End <= end {
			continue // the forward test's time: the reverse flow had not begun
		}
		in.Start, in.End = math.Max(in.Start, end)-end, in.End-end
		rev = append(rev, in)
	}
	return append(clipIntervals(fwd, end), clipIntervals(rev, end)...)
}

// matrixTimeCharts builds a matrix's throughput-over-time charts, one per
// protocol (TCP and UDP rates can be orders of magnitude apart: UDP is
// paced at -b). A chart with a cell whose receiver's intervals are
// unknown says so in its title and names those cells in its caption.
func matrixTimeCharts(m *result.Matrix) []cellTimeChart {
	var charts []cellTimeChart
	for _, proto := range []string{"tcp", "udp"} {
		ch := cellTimeChart{title: "Throughput over time, " + strings.ToUpper(proto) + " cells"}
		var offerOnly []string
		seen := map[*result.Result]bool{}
		for _, c := range m.Cells {
			if c.Protocol != proto || c.Result == nil || seen[c.Result] {
				continue
			}
			seen[c.Result] = true
			ss, offer := cellSeries(c)
			ch.ss = append(ch.ss, ss...)
			if offer {
				offerOnly = append(offerOnly, c.Name())
			}
		}
		if len(offerOnly) > 0 {
			ch.title += " (sender's offer where the receiver's intervals are unknown)"
			ch.note = strings.Join(offerOnly, ", ") + ": " + noReceiverIntervals
		}
		charts = append(charts, ch)
	}
	return charts
}
