package legend

import (
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestFreeCorner: a rising line leaves the top left free; lines along the
// top and the bottom leave no corner free.
func TestFreeCorner(t *testing.T) {
	id := func(x float64) float64 { return x }
	rising := []Line{{Name: "a", XYs: plotter.XYs{{X: 0, Y: 0}, {X: 10, Y: 10}}}}
	if c, ok := freeCorner(rising, 0, 10, 0, 11, 0.3, 0.2, id); !ok || c != (corner{top: true, left: true}) {
		t.Errorf("corner %+v %v, want top left", c, ok)
	}
	flatHigh := []Line{{Name: "a", XYs: plotter.XYs{{X: 0, Y: 10}, {X: 10, Y: 10}}},
		{Name: "b", XYs: plotter.XYs{{X: 0, Y: 0.5}, {X: 10, Y: 0.5}}}}
	if _, ok := freeCorner(flatHigh, 0, 10, 0, 11, 0.3, 0.2, id); ok {
		t.Error("lines along the top and bottom leave no corner free")
	}
}
