package htmlreport

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/wirebench/wirebench/internal/result"
)

// Chart is one chart of the report.
type Chart struct {
	// ID is the chart's id in the page and its PNG file name (ID.png).
	ID    string
	Title string
	// Caption says what the chart cannot show (under it, in the page).
	Caption string
	p       *plot.Plot
}

// chartW and chartH are every chart's size.
const (
	chartW = 16 * vg.Centimeter
	chartH = 8 * vg.Centimeter
	// chartMargin is the blank edge around every chart.
	chartMargin = 6 * vg.Millimeter / 2
)

// palette colours the series of a chart, in order.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

func colour(i int) color.Color { return palette[i%len(palette)] }

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

func init() {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

// drawOn draws the chart, turning a panic of the plotting library on a
// pathological figure into an error: a report must not crash on what a
// document holds.
func (c *Chart) drawOn(cv draw.Canvas) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("drawing chart %s: %v", c.ID, v)
		}
	}()
	// A margin: a browser's box of a text (its font's ascent and
	// descent) is taller than its ink, and an axis' last tick label is
	// centred on the plot's edge.
	cv = draw.Crop(cv, chartMargin, -chartMargin, chartMargin, -chartMargin)
	fitTitle(c.p, cv.Rectangle.Size().X)
	c.p.Draw(cv)
	return nil
}

// fitTitle breaks the plot's title into lines, at spaces, so that none is
// wider than w less a margin: a title longer than the chart would be cut
// at both of its edges.
func fitTitle(p *plot.Plot, w vg.Length) {
	sty := p.Title.TextStyle
	room := w - 2*vg.Points(8)
	var lines []string
	for _, para := range strings.Split(p.Title.Text, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			try := strings.TrimSpace(line + " " + word)
			if line != "" && sty.Width(try) > room {
				lines = append(lines, line)
				try = word
			}
			line = try
		}
		lines = append(lines, line)
	}
	p.Title.Text = strings.Join(lines, "\n")
}

// SVG renders the chart as an SVG element (no XML prolog), for inlining,
// with the hooks of hooks.go around what each datum draws.
func (c *Chart) SVG() ([]byte, error) {
	cv := newHookCanvas(chartW, chartH)
	if err := c.drawOn(draw.New(cv)); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("drawing chart %s as SVG: %w", c.ID, err)
	}
	s, err := cv.injectHooks(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("drawing chart %s as SVG: %w", c.ID, err)
	}
	if s, err = cv.textLengths(s); err != nil {
		return nil, fmt.Errorf("drawing chart %s as SVG: %w", c.ID, err)
	}
	if i := bytes.Index(s, []byte("<svg")); i > 0 {
		s = s[i:]
	}
	return s, nil
}

// PNG renders the chart as a PNG image.
func (c *Chart) PNG() ([]byte, error) {
	cv := vgimg.NewWith(vgimg.UseWH(chartW, chartH), vgimg.UseDPI(144))
	if err := c.drawOn(draw.New(cv)); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("drawing chart %s as PNG: %w", c.ID, err)
	}
	return b.Bytes(), nil
}

// series is one named line of x, y points.
type series struct {
	name string
	xys  plotter.XYs
	dash bool // a dashed line without point markers
	bare bool // a line without point markers
	// role says what the series is, for the SVG's hooks: "received",
	// "offered", "medium", "measured", "limit", … (docs/report.md).
	role string
}

// plotLimit bounds the values a chart draws: beyond it (or not finite)
// a value is no measurement of a link, and gonum's axes cannot span it.
const plotLimit = 1e12

func plottable(v float64) bool { return !math.IsNaN(v) && math.Abs(v) < plotLimit }

// keepPlottable drops the points outside the plottable range, counting
// them in *dropped.
func keepPlottable(xys plotter.XYs, dropped *int) plotter.XYs {
	var out plotter.XYs
	for _, p := range xys {
		if plottable(p.X) && plottable(p.Y) {
			out = append(out, p)
		} else {
			*dropped++
		}
	}
	return out
}

// noteDropped says in the chart's title that values were left out: the
// tables below the chart still hold them.
func noteDropped(p *plot.Plot, dropped int) {
	if dropped > 0 {
		p.Title.Text += fmt.Sprintf(" (%d values beyond ±1e12 left out: see the tables)", dropped)
	}
}

// tinySpan says an axis range is too narrow to draw ticks on.
func tinySpan(lo, hi float64) bool {
	return hi > lo && hi-lo < 1e-9*math.Max(math.Abs(lo), math.Abs(hi))
}

// linesChart draws the series as lines with points, the y axis from 0 (or
// the lowest value) to 10 % above the highest, the legend in a corner the
// lines leave free (or above them).
func linesChart(title, x, y string, ss []series) (*plot.Plot, error) {
	return linesChartScaled(title, x, y, ss, false)
}

func linesChartScaled(title, x, y string, ss []series, logX bool) (*plot.Plot, error) {
	p := newPlot(title, x, y)
	n, dropped := 0, 0
	var kept []series
	for _, s := range ss {
		s.xys = keepPlottable(s.xys, &dropped)
		if len(s.xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return nil, fmt.Errorf("chart %q, series %q: %w", title, s.name, err)
		}
		l.Color, pts.Color = colour(n), colour(n)
		l.Width = vg.Points(1.5)
		if s.dash {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		if s.dash || s.bare {
			pts = nil
		}
		hl := &hookedLine{Line: l, pts: pts, name: s.name, role: s.role}
		p.Add(hl)
		p.Legend.Add(s.name, hl)
		kept = append(kept, s)
		n++
	}
	if n == 0 {
		return nil, nil
	}
	noteDropped(p, dropped)
	p.Y.Min = math.Min(p.Y.Min, 0)
	p.Y.Max += 0.1 * math.Abs(p.Y.Max-math.Min(p.Y.Min, 0))
	if tinySpan(p.X.Min, p.X.Max) || tinySpan(p.Y.Min, p.Y.Max) {
		return nil, nil // nothing readable to draw; the tables hold the figures
	}
	placeLegend(p, kept, logX)
	return p, nil
}

// bars is one named group of bar heights, one per label.
type bars struct {
	name   string
	values []float64
}

// barsChart draws grouped bars: a group per label, a bar per series.
func barsChart(title, y string, labels []string, groups []bars) (*plot.Plot, error) {
	p := newPlot(title, "", y)
	dropped := 0
	for i := range groups {
		vs := make([]float64, len(groups[i].values))
		for j, v := range groups[i].values {
			if plottable(v) {
				vs[j] = v
			} else {
				dropped++
			}
		}
		groups[i].values = vs
	}
	noteDropped(p, dropped)
	w := vg.Points(math.Max(4, math.Min(40, 300/float64(max(1, len(labels)*len(groups))))))
	for i, g := range groups {
		b, err := plotter.NewBarChart(plotter.Values(g.values), w)
		if err != nil {
			return nil, fmt.Errorf("chart %q, bars %q: %w", title, g.name, err)
		}
		b.Color = colour(i)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(len(groups)-1)/2)
		hb := &hookedBars{BarChart: b, name: g.name, labels: labels}
		p.Add(hb)
		if len(groups) > 1 {
			p.Legend.Add(g.name, hb)
		}
	}
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.6, float64(len(labels))-0.4
	p.Y.Min, p.Y.Max = math.Min(p.Y.Min, 0), p.Y.Max+0.08*math.Abs(p.Y.Max)
	if tinySpan(p.Y.Min, p.Y.Max) {
		return nil, nil
	}
	return p, nil
}

// histChart draws RTT distributions: each series' bins as a step outline
// of the share of samples per bin, against the bin's RTT.
func histChart(title string, names []string, binsets [][]result.RTTBin) (*plot.Plot, error) {
	var ss []series
	for i, bs := range binsets {
		var total int64
		for _, b := range bs {
			total += b.Count
		}
		if total == 0 {
			continue
		}
		// A step outline that drops to 0 where bins are empty (the
		// document lists the non-empty ones only).
		var xys plotter.XYs
		for j, b := range bs {
			if j == 0 || b.From > bs[j-1].To {
				if j > 0 {
					xys = append(xys, plotter.XY{X: bs[j-1].To, Y: 0})
				}
				xys = append(xys, plotter.XY{X: b.From, Y: 0})
			}
			share := 100 * float64(b.Count) / float64(total)
			xys = append(xys, plotter.XY{X: b.From, Y: share}, plotter.XY{X: b.To, Y: share})
		}
		xys = append(xys, plotter.XY{X: bs[len(bs)-1].To, Y: 0})
		ss = append(ss, series{name: names[i], xys: xys, bare: true})
	}
	// The bins are logarithmic (about 12 % wide): so is the axis, unless
	// a bin starts at 0.
	logX := true
	for _, s := range ss {
		for _, p := range s.xys {
			logX = logX && p.X > 0
		}
	}
	p, err := linesChartScaled(title, "RTT (ms, log scale)", "% of samples per bin", ss, logX)
	if p == nil || err != nil {
		return p, err
	}
	if logX && p.X.Min > 0 && p.X.Max > p.X.Min {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	} else {
		p.X.Label.Text = "RTT (ms)"
	}
	return p, nil
}

// intervalSeries turns intervals into throughput-over-time series in
// Mbit/s, one per flow: each interval's average drawn as a step across the
// time it covers.
func intervalSeries(prefix string, ivs []result.Interval) []series {
	byFlow := map[string]plotter.XYs{}
	var order []string
	for _, in := range ivs {
		if in.End <= in.Start || math.IsNaN(in.BitsPerSecond) {
			continue
		}
		if _, ok := byFlow[in.Flow]; !ok {
			order = append(order, in.Flow)
		}
		byFlow[in.Flow] = append(byFlow[in.Flow], plotter.XY{X: in.Start, Y: in.BitsPerSecond / 1e6}, plotter.XY{X: in.End, Y: in.BitsPerSecond / 1e6})
	}
	var out []series
	for _, f := range order {
		name := prefix
		if f != "" {
			name = strings.TrimSpace(prefix + " " + f)
		}
		out = append(out, series{name: name, xys: byFlow[f], bare: true})
	}
	return out
}

// flat is a horizontal dashed line at y across the x range of ss.
func flat(name string, y float64, ss []series) series {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.xys {
			lo, hi = math.Min(lo, p.X), math.Max(hi, p.X)
		}
	}
	if math.IsInf(lo, 0) {
		return series{}
	}
	return series{name: name, xys: plotter.XYs{{X: lo, Y: y}, {X: hi, Y: y}}, dash: true}
}
