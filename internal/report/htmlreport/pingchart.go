package htmlreport

import (
	"fmt"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/wirebench/wirebench/internal/result"
)

// pingCharts are a ping run's charts: the RTT per payload size against
// the wire's minimum round trip for that size (two frames' wire time on
// the medium, from the line-rate model: the document's "implied"), and
// each size's implied rate against the medium's rate. Without --medium
// the document has no wire minimum: the RTT chart is drawn alone and its
// caption says so.
type pingCharts struct {
	rtt, rate         []series
	rttNote, rateNote string
	head              []string   // the table's extra columns
	cells             [][]string // per size of pv.Sizes with data, the extra cells
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// buildPingCharts makes the series of a ping run's charts and the table
// columns that hold the same figures.
func buildPingCharts(pv *result.Ping) pingCharts {
	implied := map[int]result.PingImplied{}
	medium := ""
	var mediumBPS float64
	for _, im := range pv.Implied {
		if im.Error == "" && im.RoundTripWireS > 0 {
			implied[im.Size] = im
			medium, mediumBPS = im.Medium, im.MediumBPS
		}
	}
	var lo, p50, p99, wire, rate, line plotter.XYs
	var pc pingCharts
	if len(implied) > 0 {
		pc.head = []string{"wire minimum RTT (ms)", "implied Mbit/s"}
	}
	for _, z := range pv.Sizes {
		if z == nil {
			continue
		}
		x := float64(z.Size)
		var extra []string
		if z.Received > 0 {
			lo = append(lo, plotter.XY{X: x, Y: msOf(z.RTT.Min)})
			p50 = append(p50, plotter.XY{X: x, Y: msOf(z.RTT.P50)})
			p99 = append(p99, plotter.XY{X: x, Y: msOf(z.RTT.P99)})
		}
		if im, ok := implied[z.Size]; ok {
			wire = append(wire, plotter.XY{X: x, Y: im.RoundTripWireS * 1e3})
			extra = []string{fmt.Sprintf("%.4f", im.RoundTripWireS*1e3), "–"}
			if z.Received > 0 && im.ImpliedBPS > 0 {
				rate = append(rate, plotter.XY{X: x, Y: im.ImpliedBPS / 1e6})
				line = append(line, plotter.XY{X: x, Y: im.MediumBPS / 1e6})
				extra[1] = fmt.Sprintf("%.3f", im.ImpliedBPS/1e6)
			}
		} else if len(implied) > 0 {
			extra = []string{"–", "–"}
		}
		pc.cells = append(pc.cells, extra)
	}
	pc.rtt = []series{{name: "min", xys: lo, role: "min"}, {name: "p50", xys: p50, role: "p50"}, {name: "p99", xys: p99, role: "p99"}}
	if len(wire) == 0 {
		pc.rttNote = "no wire minimum: the run had no --medium"
		return pc
	}
	pc.rtt = append(pc.rtt, series{name: "wire minimum on " + medium, xys: wire, dash: true, role: "limit"})
	pc.rttNote = "the wire minimum is the echo request's and reply's time on the wire of " + medium +
		" (" + strconv.FormatFloat(mediumBPS/1e6, 'g', 6, 64) + " Mbit/s), with no time in any host: an RTT below it did not cross that wire"
	if len(rate) > 0 {
		pc.rate = []series{{name: "implied by the p50 RTT", xys: rate, role: "measured"},
			{name: "medium: " + medium, xys: line, dash: true, role: "limit"}}
		pc.rateNote = "the rate at which the echo's bytes must cross the wire for the median RTT, request and reply each given half of it"
	}
	return pc
}

// rttChart draws the RTT series against the payload size; with one size
// (a line needs two) as a group of bars, the wire minimum beside them.
func (pc pingCharts) rttChart() (*plot.Plot, error) {
	const title = "RTT by payload size against the wire's minimum"
	if len(pc.rtt[0].xys) != 1 {
		return linesChart(title, "ICMP payload (bytes)", "RTT (ms)", pc.rtt)
	}
	label := strconv.FormatFloat(pc.rtt[0].xys[0].X, 'f', -1, 64) + " B"
	var groups []bars
	for _, s := range pc.rtt {
		if len(s.xys) == 1 {
			groups = append(groups, bars{name: s.name, values: []float64{s.xys[0].Y}})
		}
	}
	return barsChart(title, "RTT (ms)", []string{label}, groups)
}
