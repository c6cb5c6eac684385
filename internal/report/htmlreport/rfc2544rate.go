package htmlreport

import (
	"fmt"
	"sort"

	"gonum.org/v1/plot/plotter"

	"github.com/wirebench/wirebench/internal/result"
)

// rfcFrameRateSeries is the NDR and PDR per size as a share of the
// medium's maximum frame rate for that size (the line-rate model's packet
// rate, the document's line_pps), with that maximum as a dashed line at
// 100 %: RFC 2544's throughput is a frame rate, and a small frame's
// maximum is many times a large one's, so in frames/s the medium's line
// would dwarf every rate below it; as a share it is always on the chart.
// A size without the medium's rate has no point (the table lists it).
func rfcFrameRateSeries(v *result.RFC2544) []series {
	var ndr, pdr, line plotter.XYs
	for _, z := range v.Sizes {
		if !rfcDone(z, result.RFC2544TestThroughput) || z.LinePPS <= 0 {
			continue
		}
		x := float64(z.Size)
		if z.NDRPPS > 0 { // no rate passed: no point (the table says why)
			ndr = append(ndr, plotter.XY{X: x, Y: 100 * z.NDRPPS / z.LinePPS})
		}
		if z.PDRPPS > 0 {
			pdr = append(pdr, plotter.XY{X: x, Y: 100 * z.PDRPPS / z.LinePPS})
		}
		line = append(line, plotter.XY{X: x, Y: 100})
	}
	for _, xys := range []plotter.XYs{ndr, pdr, line} {
		sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X }) // a line runs left to right
	}
	lineName := "medium's frame rate"
	if v.Test.Medium != "" {
		lineName += " (" + v.Test.Medium + ")"
	}
	return []series{
		{name: "NDR (no loss)", xys: ndr, role: "ndr"},
		{name: fmt.Sprintf("PDR (loss ≤ %g %%)", v.Test.PDRPercent), xys: pdr, role: "pdr"},
		{name: lineName, xys: line, dash: true, role: "line"},
	}
}
