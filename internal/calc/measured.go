package calc

// A measured figure (--measured) placed on the medium: its share of what
// the medium allows, the rates it implies, and what else would give it.

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
)

// Measured is a measured figure placed on a medium (result.CalcMeasured).
type Measured = result.CalcMeasured

// Fit is one thing that would give a measured figure (result.CalcFit).
type Fit = result.CalcFit

// Kinds of Fit.
const (
	FitTick   = "tick"
	FitMedium = "medium"
)

// Ticks are the timer rates, in Hz, a measured datagram rate is checked
// against: the 1 ms tick of most RTOS ports and Linux HZ=1000, Linux's
// HZ=250, and the 10 ms tick of HZ=100 and of RTOS ports built that way.
var Ticks = []float64{1000, 250, 100}

// FitWithin is how close a figure must come to a fit, as a share of the
// figure, to be said to fit it.
const FitWithin = 0.005

// tickSlack is how close, in datagrams per tick, a rate must come to a
// whole number per tick. With it, a rate picked at random fits a given
// tick one time in 25 at most (and one of the three about one time in
// ten), so a fit says something; FitWithin alone would let any rate of
// more than a hundred datagrams per tick fit.
const tickSlack = 0.02

// mediumFitBelow is the lowest share of another medium's ceiling that is
// taken as that ceiling: what a path capped by it would measure.
const mediumFitBelow = 99.0

// Measure places rate, typed as typed, on medium m for payload-byte
// datagrams on stack s, whose figures on m are r.
func Measure(r Result, m linerate.Medium, s linerate.Stack, rate units.Rate, typed string) (*Measured, error) {
	goodput := rate.Value
	if rate.PPS {
		goodput = rate.Value * 8 * float64(r.Payload)
	}
	pl, err := linerate.Measured(m, s, r.Payload, goodput)
	if err != nil {
		return nil, fmt.Errorf("--measured: %w", err)
	}
	me := &Measured{
		AsTyped: typed, GoodputBPS: goodput, PercentOfTheoretical: pl.PercentOfTheoretical,
		PacketsPerSecond: pl.PacketsPerSecond, FramesPerSecond: pl.FramesPerSecond,
		WireL2BPS: pl.WireL2BPS, WireL1BPS: pl.WireL1BPS,
		Suspect: linerate.AboveMedium("measured goodput", pl.PercentOfTheoretical, m.Name),
		Fits:    tickFits(pl.PacketsPerSecond),
	}
	me.Fits = append(me.Fits, mediumFits(m.Name, s, r.Payload, goodput)...)
	return me, nil
}

// tickFits are the ticks of Ticks that, moving a whole number of
// datagrams each, give pps within FitWithin and tickSlack.
func tickFits(pps float64) []Fit {
	fits := []Fit{}
	for _, hz := range Ticks {
		n := math.Round(pps / hz)
		if n < 1 {
			continue
		}
		exact := n * hz
		if d := math.Abs(pps - exact); d > FitWithin*pps || d > tickSlack*hz {
			continue
		}
		fits = append(fits, Fit{Kind: FitTick, TickS: 1 / hz, PerTick: int(n), PacketsPerSecond: exact, OffPercent: 100 * (pps - exact) / exact})
	}
	return fits
}

// mediumFits are the known media, other than the one named, whose ceiling
// for payload on s the goodput is close to (mediumFitBelow to
// linerate.SuspectAbovePercent of it): a path capped there.
func mediumFits(name string, s linerate.Stack, payload int, goodput float64) []Fit {
	var fits []Fit
	for _, n := range linerate.MediumNames() {
		if n == name || strings.HasPrefix(n, "custom") {
			continue
		}
		m, err := linerate.LookupMedium(n)
		if err != nil {
			continue
		}
		b, err := linerate.Analyze(m, s, payload)
		if err != nil || b.GoodputBPS <= 0 {
			continue // this payload cannot cross that medium
		}
		if pct := 100 * goodput / b.GoodputBPS; pct >= mediumFitBelow && pct <= linerate.SuspectAbovePercent {
			fits = append(fits, Fit{Kind: FitMedium, Medium: n, TheoreticalBPS: b.GoodputBPS, PacketsPerSecond: b.PacketsPerSecond, OffPercent: pct - 100})
		}
	}
	return fits
}

// writeMeasured prints r's measured figure on medium m.
func writeMeasured(w io.Writer, r Result, m Medium) {
	me := r.Measured
	unit := "frames"
	if len(r.Fragments) > 1 {
		unit = "datagrams" // every datagram is several frames; ticks move datagrams
	}
	fmt.Fprintf(w, "measured %s: %s of goodput in %d-byte payloads\n", me.AsTyped, mbit(me.GoodputBPS), r.Payload)
	fmt.Fprintf(w, "  share of what %s allows: %.1f %% of %s\n", r.Medium, me.PercentOfTheoretical, mbit(r.GoodputBPS))
	fmt.Fprintf(w, "  frame rate it implies: %s frames/s (datagrams/s %s); on the wire %s, %.1f %% of the line's %s\n",
		commas(me.FramesPerSecond, 2), commas(me.PacketsPerSecond, 2), mbit(me.WireL1BPS), 100*me.WireL1BPS/m.BitRateBPS, linerate.MediumRate(m.BitRateBPS))
	if me.Suspect != "" {
		fmt.Fprintf(w, "  suspect: %s\n", me.Suspect)
	}
	var ticks []Fit
	for _, f := range me.Fits {
		if f.Kind == FitTick {
			ticks = append(ticks, f)
		}
	}
	if len(ticks) > 0 {
		f := ticks[0]
		fmt.Fprintf(w, "  fits: %s %s/s: a %s tick with %d %s per tick would give %s", commas(me.PacketsPerSecond, 0), unit, tickName(f.TickS), f.PerTick, strings.TrimSuffix(unit, map[bool]string{true: "s"}[f.PerTick == 1]), offWords(f))
		var also []string
		for _, g := range ticks[1:] {
			also = append(also, fmt.Sprintf("a %s tick with %d", tickName(g.TickS), g.PerTick))
		}
		if len(also) > 0 {
			fmt.Fprintf(w, " (so would %s)", strings.Join(also, ", "))
		}
		fmt.Fprintf(w, "; a sender or receiver that moves a fixed number of %s per timer tick sets such a rate, not the medium\n", unit)
	}
	for _, f := range me.Fits {
		if f.Kind == FitMedium {
			fmt.Fprintf(w, "  fits: %.2f %% of the %s %s allows at most: a %s link on the path would cap the figure there\n",
				100+f.OffPercent, mbit(f.TheoreticalBPS), f.Medium, f.Medium)
		}
	}
	if len(me.Fits) == 0 {
		fmt.Fprintf(w, "  fits: nothing else: no 1 ms, 4 ms or 10 ms tick moving a whole number of %s per tick, and no other medium's ceiling\n", unit)
	}
}

// tickName is a tick's period in words: "1 ms", "4 ms".
func tickName(s float64) string { return trimNum(s*1e3) + " ms" }

// offWords says how close a tick fit is: "exactly this", or how far off.
func offWords(f Fit) string {
	if math.Abs(f.OffPercent) < 0.01 {
		return "exactly this"
	}
	return fmt.Sprintf("%s/s, %.2f %% from this", commas(f.PacketsPerSecond, 0), math.Abs(f.OffPercent))
}
