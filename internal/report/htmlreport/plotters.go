package htmlreport

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The plotters below draw what gonum's would, and mark each datum with a
// hook (hooks.go) so the SVG says what it draws.

// hookedLine is a series: its line, and its points when it has markers.
// The line is one group of class wb-series with the series' name, role
// and points; each point marker is a group of class wb-point.
type hookedLine struct {
	*plotter.Line
	pts  *plotter.Scatter // nil: no markers
	name string
	role string
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', 7, 64) }

// pointsAttr writes points as "x,y x,y …".
func pointsAttr(xys plotter.XYs) string {
	parts := make([]string, len(xys))
	for i, p := range xys {
		parts[i] = fmtNum(p.X) + "," + fmtNum(p.Y)
	}
	return strings.Join(parts, " ")
}

// Plot draws the line, then each marker.
func (l *hookedLine) Plot(c draw.Canvas, p *plot.Plot) {
	xys := l.Line.XYs
	marked(c, hook{class: "wb-series", attrs: [][2]string{{"series", l.name}, {"role", l.role}, {"points", pointsAttr(xys)}}},
		func() { l.Line.Plot(c, p) })
	if l.pts == nil || l.pts.GlyphStyle.Radius <= 0 {
		return
	}
	trX, trY := p.Transforms(&c)
	for _, pt := range xys {
		pt := pt
		marked(c, hook{class: "wb-point", attrs: [][2]string{{"series", l.name}, {"x", fmtNum(pt.X)}, {"y", fmtNum(pt.Y)}}},
			func() { c.DrawGlyph(l.pts.GlyphStyle, vg.Point{X: trX(pt.X), Y: trY(pt.Y)}) })
	}
}

// Thumbnail draws the legend's sample of the line (and marker).
func (l *hookedLine) Thumbnail(c *draw.Canvas) {
	l.Line.Thumbnail(c)
	if l.pts != nil && l.pts.GlyphStyle.Radius > 0 {
		l.pts.Thumbnail(c)
	}
}

// barPlot is one bar per label, each with a text above it. Each bar is a
// group of class wb-bar with its label, value and the extra attributes
// given, holding the bar and its text.
type barPlot struct {
	values []float64
	texts  []string
	attrs  [][][2]string // per bar, beside label and value
	labels []string
	width  vg.Length
	colour color.Color
}

// DataRange spans the bars, and room above them for their texts.
func (b *barPlot) DataRange() (xmin, xmax, ymin, ymax float64) {
	for _, v := range b.values {
		ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
	}
	return -0.5, float64(len(b.values)) - 0.5, ymin, ymax * 1.15
}

// Plot draws each bar and its text.
func (b *barPlot) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := text.Style{Color: color.Gray{Y: 0x20}, Font: plot.DefaultFont, XAlign: draw.XCenter, YAlign: draw.YBottom, Handler: p.Title.TextStyle.Handler}
	sty.Font.Size = vg.Points(9)
	for i, v := range b.values {
		x := trX(float64(i))
		attrs := append([][2]string{{"label", b.labels[i]}, {"mbps", fmt.Sprintf("%.3f", v)}}, b.attrs[i]...)
		marked(c, hook{class: "wb-bar", attrs: attrs}, func() {
			y0, y1 := trY(0), trY(v)
			c.FillPolygon(b.colour, []vg.Point{{X: x - b.width/2, Y: y0}, {X: x + b.width/2, Y: y0},
				{X: x + b.width/2, Y: y1}, {X: x - b.width/2, Y: y1}})
			if b.texts[i] != "" {
				c.FillText(sty, vg.Point{X: x, Y: max(y0, y1) + vg.Points(3)}, b.texts[i])
			}
		})
	}
}

// vmark is a vertical dashed line at x with a label near the top of the
// plot, staggered by its index so neighbouring labels do not overlap: a
// group of the given class and attributes. It does not widen the axes.
type vmark struct {
	x      float64
	label  string
	index  int
	class  string
	attrs  [][2]string
	colour color.Color
}

// Plot draws the line and its label.
func (m *vmark) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(m.x)
	ls := draw.LineStyle{Color: m.colour, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
	sty := text.Style{Color: m.colour, Font: plot.DefaultFont, XAlign: draw.XLeft, YAlign: draw.YTop, Handler: p.Title.TextStyle.Handler}
	sty.Font.Size = vg.Points(9)
	tx := x + vg.Points(3)
	if w := sty.Width(m.label); tx+w > c.Max.X {
		sty.XAlign, tx = draw.XRight, x-vg.Points(3)
	}
	ty := c.Max.Y - vg.Points(4) - vg.Length(m.index%3)*vg.Points(12)
	marked(c, hook{class: m.class, attrs: m.attrs}, func() {
		c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
		c.FillText(sty, vg.Point{X: tx, Y: ty}, m.label)
	})
}

// hookedBars is a group of gonum bars (one per label, not stacked): each
// bar is a group of class wb-bar with its label, its group's name and
// its value.
type hookedBars struct {
	*plotter.BarChart
	name   string
	labels []string
}

// Plot draws each bar as gonum would, one bar at a time.
func (b *hookedBars) Plot(c draw.Canvas, p *plot.Plot) {
	for i, v := range b.Values {
		one := *b.BarChart
		one.Values, one.XMin = plotter.Values{v}, b.XMin+float64(i)
		label := ""
		if i < len(b.labels) {
			label = b.labels[i]
		}
		marked(c, hook{class: "wb-bar", attrs: [][2]string{{"label", label}, {"series", b.name}, {"value", fmtNum(v)}}},
			func() { one.Plot(c, p) })
	}
}
