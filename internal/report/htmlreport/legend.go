package htmlreport

import (
	"gonum.org/v1/plot"

	"github.com/wirebench/wirebench/internal/report/legend"
)

// placeLegend puts p's legend off the lines of ss (package legend): the
// named series are its entries, the unnamed ones marks it must not cover.
func placeLegend(p *plot.Plot, ss []series, logX bool) {
	lines := make([]legend.Line, len(ss))
	for i, s := range ss {
		lines[i] = legend.Line{Name: s.name, XYs: s.xys}
	}
	legend.Place(p, lines, logX)
}
