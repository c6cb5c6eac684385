package htmlreport

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html"
	"regexp"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Machine-readable hooks in the SVG.
//
// gonum's SVG canvas writes bare <path> and <text> elements, with nothing
// saying which bar or which series they draw. So that a program (the
// browser test, a user's script) can read a chart's data from the page, the
// plotters of this package wrap what they draw of each datum in a group:
//
//	<g class="wb-bar" data-label="link=eth" data-mbps="19.841" data-ratio="1.000">…</g>
//
// They do it through hookCanvas, which wraps the SVG canvas: a plotter
// calls marked(c, hook, draw), which, on a hookCanvas, writes a sentinel
// text before and after what draw writes. injectHooks then replaces each
// sentinel by the group's opening or closing tag. The sentinels carry a
// random nonce per chart, so no text of a document can pass for one. On
// any other canvas (PNG) marked just draws. The classes and attributes are
// listed in docs/report.md.

// hook is one group's class and data attributes (names without "data-").
type hook struct {
	class string
	attrs [][2]string
}

// hookCanvas is an SVG canvas that can mark groups (see above).
type hookCanvas struct {
	*vgsvg.Canvas
	nonce string
	face  font.Face
	hooks []hook
	open  int // groups begun and not yet ended
	// widths are the widths of the texts drawn, in order, as gonum laid
	// them out (textLengths writes them into the SVG).
	widths []vg.Length
}

// FillString draws a text and records its width.
func (c *hookCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.widths = append(c.widths, f.Width(s))
	c.Canvas.FillString(f, pt, s)
}

// textRE matches the opening of a text element as vgsvg writes it.
var textRE = regexp.MustCompile(`<text x="`)

// textLengths gives every text of svg (its sentinels already replaced)
// the width gonum laid it out at, as its textLength: gonum places a text
// by its font's metrics (Liberation Sans), and a browser without that
// font draws it in another, wider one, which ran titles and labels past
// the chart's edge. With textLength the browser fits the text to the
// space gonum gave it, whatever font it has.
func (c *hookCanvas) textLengths(svg []byte) ([]byte, error) {
	i := 0
	out := textRE.ReplaceAllFunc(svg, func(m []byte) []byte {
		if i >= len(c.widths) {
			i++
			return m
		}
		w := c.widths[i]
		i++
		return []byte(fmt.Sprintf(`<text textLength="%.3f" lengthAdjust="spacingAndGlyphs" x="`, w.Points()))
	})
	if i != len(c.widths) {
		return nil, fmt.Errorf("%d texts in the SVG, %d drawn", i, len(c.widths))
	}
	return out, nil
}

func newHookCanvas(w, h vg.Length) *hookCanvas {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return &hookCanvas{Canvas: vgsvg.New(w, h), nonce: hex.EncodeToString(b[:]),
		face: font.DefaultCache.Lookup(plot.DefaultFont, 1)}
}

func (c *hookCanvas) begin(h hook) {
	c.Canvas.FillString(c.face, vg.Point{}, fmt.Sprintf("wbhook-%s-b%d", c.nonce, len(c.hooks)))
	c.hooks = append(c.hooks, h)
	c.open++
}

func (c *hookCanvas) end() {
	c.Canvas.FillString(c.face, vg.Point{}, "wbhook-"+c.nonce+"-e")
	c.open--
}

// hookCanvasOf finds the hookCanvas under c: gonum nests draw.Canvases
// (its padding wraps a draw.Canvas as the vg.Canvas of another).
func hookCanvasOf(c draw.Canvas) (*hookCanvas, bool) {
	var v vg.Canvas = c.Canvas
	for range 16 {
		switch x := v.(type) {
		case *hookCanvas:
			return x, true
		case draw.Canvas:
			v = x.Canvas
		case *draw.Canvas:
			v = x.Canvas
		default:
			return nil, false
		}
	}
	return nil, false
}

// marked runs draw inside a group carrying h when c draws SVG with hooks.
func marked(c draw.Canvas, h hook, draw func()) {
	hc, ok := hookCanvasOf(c)
	if !ok {
		draw()
		return
	}
	hc.begin(h)
	draw()
	hc.end()
}

// sentinelRE matches one sentinel text element as vgsvg writes it.
var sentinelRE = regexp.MustCompile(`<text [^>]*>wbhook-([0-9a-f]{16})-(b[0-9]+|e)</text>\n?`)

// injectHooks replaces the sentinels of c in svg by the groups' tags. It
// fails when the sentinels do not pair up: a plotter that broke the rule.
func (c *hookCanvas) injectHooks(svg []byte) ([]byte, error) {
	if c.open != 0 {
		return nil, fmt.Errorf("%d chart groups begun and not ended", c.open)
	}
	depth, seen := 0, 0
	var bad error
	out := sentinelRE.ReplaceAllFunc(svg, func(m []byte) []byte {
		sm := sentinelRE.FindSubmatch(m)
		if string(sm[1]) != c.nonce {
			return m // not ours: left as drawn
		}
		if string(sm[2]) == "e" {
			depth--
			if depth < 0 && bad == nil {
				bad = fmt.Errorf("a chart group ends before it begins")
			}
			return []byte("</g>\n")
		}
		var i int
		fmt.Sscanf(string(sm[2][1:]), "%d", &i)
		if i != seen || i >= len(c.hooks) {
			if bad == nil {
				bad = fmt.Errorf("chart group %d out of order", i)
			}
			return nil
		}
		seen++
		depth++
		return []byte(c.hooks[i].tag())
	})
	if bad == nil && (depth != 0 || seen != len(c.hooks)) {
		bad = fmt.Errorf("%d of %d chart groups written, %d left open", seen, len(c.hooks), depth)
	}
	if bad != nil {
		return nil, bad
	}
	return out, nil
}

// tag is the group's opening tag, every value escaped.
func (h hook) tag() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<g class="%s"`, html.EscapeString(h.class))
	for _, a := range h.attrs {
		fmt.Fprintf(&b, ` data-%s="%s"`, a[0], html.EscapeString(a[1]))
	}
	b.WriteString(">\n")
	return b.String()
}
