// Package legend places a chart's legend where it hides no data: the
// first corner of the plot area that no line passes through, or above the
// data, the y axis grown to make room.
package legend

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// The legend goes where it hides no data: the first corner of the plot
// area (top right, top left, bottom right, bottom left) that no line
// passes through; when every corner holds data, the y axis grows until the
// band above the highest value holds the legend, which goes top right, or
// top left when a mark's label is in the way.
//
// The legend's size is estimated as a share of the plot area from the
// chart's fixed size (chartW × chartH, about 400 × 170 pt of plot area),
// the legend's 10 pt font and the longest entry.
const (
	plotAreaW   = 400.0 // pt, the plot area of a chart, about
	plotAreaH   = 170.0
	legendRowH  = 13.0 // pt per entry
	legendCharW = 5.6  // pt per character of a 10 pt entry, about
	legendThumb = 34.0 // pt of sample line and padding
)

// legendBox is the legend's width and height as shares of the plot area.
func legendBox(names []string) (w, h float64) {
	longest := 0
	for _, n := range names {
		longest = max(longest, len([]rune(n)))
	}
	w = math.Min(1, (float64(longest)*legendCharW+legendThumb)/plotAreaW)
	h = math.Min(1, (float64(len(names))*legendRowH+6)/plotAreaH)
	return w, h
}

// corner is a legend position.
type corner struct{ top, left bool }

var corners = []corner{{true, false}, {true, true}, {false, false}, {false, true}}

// freeCorner is the first corner whose legend box (w × h shares of the
// area x0..x1, y0..y1) no series passes through; ok is false when every
// corner holds data.
func freeCorner(ss []Line, x0, x1, y0, y1, w, h float64, fx func(float64) float64) (corner, bool) {
	for _, c := range corners {
		bx0, bx1 := x0, x0+w*(x1-x0)
		if !c.left {
			bx0, bx1 = x1-w*(x1-x0), x1
		}
		by0, by1 := y0, y0+h*(y1-y0)
		if c.top {
			by0, by1 = y1-h*(y1-y0), y1
		}
		hit := false
		for _, s := range ss {
			if crosses(s.XYs, fx, bx0, bx1, by0, by1) {
				hit = true
				break
			}
		}
		if !hit {
			return c, true
		}
	}
	return corner{}, false
}

// crosses says whether the polyline xys (x through fx) enters the box.
// It samples each segment finely: the box is a few percent of the area,
// so 64 samples a segment cannot step over it.
func crosses(xys plotter.XYs, fx func(float64) float64, x0, x1, y0, y1 float64) bool {
	in := func(x, y float64) bool { return x >= x0 && x <= x1 && y >= y0 && y <= y1 }
	for i, p := range xys {
		if in(fx(p.X), p.Y) {
			return true
		}
		if i == 0 {
			continue
		}
		q := xys[i-1]
		ax, bx := fx(q.X), fx(p.X)
		for k := 1; k < 64; k++ {
			t := float64(k) / 64
			if in(ax+t*(bx-ax), q.Y+t*(p.Y-q.Y)) {
				return true
			}
		}
	}
	return false
}

// Line is one thing drawn on a chart: a named series (a legend entry) or,
// unnamed, a mark or its label, which the legend must not cover either.
type Line struct {
	Name string
	XYs  plotter.XYs
}

// Place puts p's legend off ss (see the package comment); logX says the x
// axis will be logarithmic.
func Place(p *plot.Plot, ss []Line, logX bool) {
	var names []string
	for _, s := range ss {
		if s.Name != "" {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	fx := func(x float64) float64 { return x }
	x0, x1 := p.X.Min, p.X.Max
	if logX && x0 > 0 {
		fx = math.Log10
		x0, x1 = math.Log10(x0), math.Log10(x1)
	}
	w, h := legendBox(names)
	c, ok := freeCorner(ss, x0, x1, p.Y.Min, p.Y.Max, w, h, fx)
	if !ok {
		// Grow the axis so the highest value stays below the legend.
		dataMax := math.Inf(-1)
		for _, s := range ss {
			for _, q := range s.XYs {
				if s.Name != "" {
					dataMax = math.Max(dataMax, q.Y)
				}
			}
		}
		p.Y.Max = (dataMax-h*p.Y.Min)/(1-math.Min(h, 0.8)) + 0.05*(dataMax-p.Y.Min)
		c = corner{top: true}
		// The marks (a cliff's line and its label along the top) stay
		// where they are: the legend takes a top corner they leave free.
		var marks []Line
		for _, s := range ss {
			if s.Name == "" {
				marks = append(marks, s)
			}
		}
		if mc, ok := freeCorner(marks, x0, x1, p.Y.Min, p.Y.Max, w, h, fx); ok && mc.top {
			c = mc
		}
	}
	p.Legend.Top, p.Legend.Left = c.top, c.left
}
