package htmlreport

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/result"
	sweepfindings "github.com/wirebench/wirebench/internal/sweep/findings"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// limitOffScale is how far above the highest measured rate the medium's
// line may lie and still set the y axis: beyond it (a USB modem swept
// with the default medium, gigabit Ethernet) the axis follows the data
// and the chart says where the line is.
const limitOffScale = 3.0

// sweepCliff is a fall of the rate between two sizes, as the sweep found
// it.
type sweepCliff struct{ below, above int }

func (c sweepCliff) label() string { return fmt.Sprintf("cliff %d→%d B", c.below, c.above) }

// sweepChart is a sweep chart's data: the measured goodput and the
// medium's limit per size (Mbit/s), the cliffs, and a note when the limit
// is off the scale.
type sweepChart struct {
	measured, limit plotter.XYs
	cliffs          []sweepCliff
	note            string
	medium          string
	// title and unit name the chart and its y axis; empty: the goodput
	// chart's ("Goodput by datagram size", "Mbit/s").
	title, unit string
}

// theoreticalBPS is a size's limit: from the share of the line, else
// from the line's packet rate.
func theoreticalBPS(size int, rateBPS float64, pct *float64, linePPS float64) float64 {
	switch {
	case pct != nil && *pct > 0:
		return rateBPS * 100 / *pct
	case linePPS > 0:
		return linePPS * 8 * float64(size)
	}
	return math.NaN()
}

// newSweepChart reads the sweep's sizes (sorted by size) and cliffs.
func newSweepChart(sw *result.Sweep) sweepChart {
	sc := sweepChart{medium: sw.Test.Medium}
	for _, z := range sw.Sizes {
		if z.RateBPS > 0 { // no point where no rate passed: it was never 0
			sc.measured = append(sc.measured, plotter.XY{X: float64(z.Size), Y: z.RateBPS / 1e6})
		}
		if th := theoreticalBPS(z.Size, z.RateBPS, z.PercentOfLine, z.LinePPS); plottable(th) {
			sc.limit = append(sc.limit, plotter.XY{X: float64(z.Size), Y: th / 1e6})
		}
	}
	for _, c := range sw.Cliffs {
		sc.cliffs = append(sc.cliffs, sweepCliff{c.Below, c.Above})
	}
	dataMax, lineMax := maxY(sc.measured), maxY(sc.limit)
	if len(sc.limit) > 0 && dataMax > 0 && lineMax > limitOffScale*dataMax {
		sc.note = fmt.Sprintf("the theoretical limit of %s (up to %.1f Mbit/s) is %.0f× the highest rate measured: off this scale, which follows the data (the table lists it)",
			firstOf(sc.medium, "the medium"), lineMax, lineMax/dataMax)
		sc.limit = nil
	}
	return sc
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func maxY(xys plotter.XYs) float64 {
	m := math.Inf(-1)
	for _, p := range xys {
		if plottable(p.Y) {
			m = math.Max(m, p.Y)
		}
	}
	return m
}

// plot draws the measured curve with a point per size, the limit dashed,
// and each cliff as a marked line named with its sizes.
func (sc sweepChart) plot() (*plot.Plot, error) {
	name := "theoretical limit"
	if sc.medium != "" {
		name += " (" + sc.medium + ")"
	}
	ss := []series{{name: "measured (loss-free rate)", xys: sc.measured, role: "measured"},
		{name: name, xys: sc.limit, dash: true, role: "limit"}}
	title, unit := firstOf(sc.title, "Goodput by datagram size"), firstOf(sc.unit, "Mbit/s")
	if sc.note != "" {
		title += " (limit off scale: see below)"
	}
	p, err := linesChart(title, "payload size (bytes)", unit, ss)
	if p == nil || err != nil {
		return p, err
	}
	obstacles := append([]series(nil), ss...)
	for i, c := range sc.cliffs {
		x := (float64(c.below) + float64(c.above)) / 2
		p.Add(&vmark{x: x, label: c.label(), index: i, class: "wb-cliff", colour: colour(3),
			attrs: [][2]string{{"below", strconv.Itoa(c.below)}, {"above", strconv.Itoa(c.above)}, {"label", c.label()}}})
		// The legend keeps off the mark and its label (about a fifth of
		// the width, on either side).
		w := 0.22 * (p.X.Max - p.X.Min)
		obstacles = append(obstacles, series{xys: plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}}},
			series{xys: plotter.XYs{{X: x - w, Y: p.Y.Max}, {X: x + w, Y: p.Y.Max}}})
	}
	if len(sc.cliffs) > 0 {
		placeLegend(p, obstacles, false)
	}
	return p, nil
}

func (r *Report) sweepSection(s *Section, d Document) error {
	var sw result.Sweep
	if err := d.view(&sw); err != nil {
		return err
	}
	s.Subtitle = "sweep"
	if h := sw.Test.Host; h != "" {
		s.Subtitle += " against " + h
	}
	s.Subtitle += mediumSuffix(sw.Test.Medium)
	// One line per cause with its count (the sizes' and trials' own
	// words are in the document), then the run's own warnings.
	for _, f := range sweepfindings.Of(&sw) {
		if f.Note {
			s.Notes = append(s.Notes, f.Text)
		} else {
			s.Warnings = append(s.Warnings, f.Text)
		}
	}
	s.Warnings = append(s.Warnings, sweepfindings.RunWarnings(&sw)...)
	s.Summary = &Table{Head: []string{"size (B)", "packets/s", "Mbit/s", "% of line", "theoretical Mbit/s"}}
	sort.SliceStable(sw.Sizes, func(i, j int) bool { return sw.Sizes[i].Size < sw.Sizes[j].Size })
	for _, z := range sw.Sizes {
		thText := "–"
		if th := theoreticalBPS(z.Size, z.RateBPS, z.PercentOfLine, z.LinePPS); !math.IsNaN(th) {
			thText = mbps(th)
		}
		pct := optNum(z.PercentOfLine, "%.2f")
		if z.Status != "" && z.Status != "ok" {
			pct += " " + strings.ToUpper(z.Status) // above what the medium allows
		}
		rate, rateMb := "none", "–" // no rate passed: below the lowest tried
		if z.RatePPS > 0 {
			rate, rateMb = fmt.Sprintf("%.1f", z.RatePPS), mbps(z.RateBPS)
		}
		s.Summary.Rows = append(s.Summary.Rows, []string{strconv.Itoa(z.Size), rate, rateMb, pct, thText})
	}
	sc := newSweepChart(&sw)
	p, err := sc.plot()
	return r.addNoted(s, "Sweep", sc.note, p, err)
}
