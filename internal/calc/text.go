package calc

// The text calc prints; its JSON is the Doc itself.

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/units"
)

// WriteText prints d as text, as the options asked: one result's figures
// (and its derivation with Explain), or a table of every size on every
// medium (with Compare, the second medium's goodput against the first).
func WriteText(w io.Writer, d Doc, c Options) error {
	for _, m := range d.Media {
		fmt.Fprintf(w, "medium %s: %s %s", m.Name, linerate.MediumRate(m.BitRateBPS), m.Kind)
		if m.Class != "" {
			fmt.Fprintf(w, " (%s, %s per transfer; bus ceiling %s)", m.Class, units.Plural(m.Aggregate, "frame"), linerate.MediumRate(m.BusCeilingBPS))
		}
		fmt.Fprintf(w, "\n  %s\n", m.Source)
	}
	if len(d.Results) > 0 {
		fmt.Fprintf(w, "stack: %s\n", d.Results[0].Stack)
	}
	if len(d.Results) == 1 || (len(d.Results) == len(d.Media) && !c.Compare) {
		writeSingle(w, d.Results[0], c.Explain)
		if d.Results[0].Measured != nil {
			writeMeasured(w, d.Results[0], d.Media[0])
		}
		return nil
	}
	writeTable(w, d, c)
	return nil
}

func writeSingle(w io.Writer, r Result, explain bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "payload:\t%d bytes in %s\n", r.Payload, framesWord(len(r.Fragments)))
	fmt.Fprintf(tw, "max goodput:\t%s\n", mbit(r.GoodputBPS))
	fmt.Fprintf(tw, "frames/s:\t%s (datagrams/s %s)\n", commas(r.FramesPerSecond, 2), commas(r.PacketsPerSecond, 2))
	fmt.Fprintf(tw, "wire efficiency:\t%.2f %%\n", r.Efficiency*100)
	fmt.Fprintf(tw, "limited by:\t%s\n", r.Limit)
	tw.Flush()
	if explain {
		fmt.Fprintln(w, "derivation:")
		for i, s := range r.Steps {
			fmt.Fprintf(w, "  %d) %s\n", i+1, s)
		}
	}
	if r.Echo != nil {
		writeEcho(w, r)
	}
}

// writeEcho prints the echo both ways: without the inter-frame gap (a
// common miscount) and with it.
func writeEcho(w io.Writer, r Result) {
	e, n := r.Echo, len(r.Fragments)
	fmt.Fprintf(w, "echo request + reply of %d bytes (each %d bytes of IP data in %s):\n", r.Payload, r.IPData, framesWord(n))
	fmt.Fprintf(w, "  counted without the inter-frame gap:    %d + %d × %s = %s bytes each way\n", r.IPData, n, trimNum(e.NoGapOverhead), trimNum(e.NoGapBytes))
	fmt.Fprintf(w, "  correct, with the inter-frame gap:      %d + %d × %s = %s bytes each way\n", r.IPData, n, trimNum(e.WireOverhead), trimNum(e.WireBytes))
	fmt.Fprintf(w, "  shortest round trip on the wire (request then reply, correct count): %.3f ms\n", e.RoundTripWireS*1e3)
	if e.RTTS > 0 {
		fmt.Fprintf(w, "  a %s round trip, half each way: %s counted without the inter-frame gap; %s correct (%.1f %% of the medium)\n",
			time.Duration(e.RTTS*float64(time.Second)), mbit(e.ImpliedNoGapBPS), mbit(e.ImpliedBPS), e.ImpliedShareOfMedium*100)
	}
}

// writeTable prints every size on every medium, a row each.
func writeTable(w io.Writer, d Doc, c Options) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	sizeCol := "payload"
	if c.Frame != "" {
		sizeCol = "frame"
	}
	fmt.Fprintf(tw, "medium\t%s\tframes\tgoodput Mbit/s\tframes/s\tefficiency %%\t\n", sizeCol)
	for _, r := range d.Results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%s\t%.2f\t\n", r.Medium, r.Size, len(r.Fragments), r.GoodputBPS/1e6, commas(r.FramesPerSecond, 0), r.Efficiency*100)
	}
	tw.Flush()
	if c.Compare && len(d.Results) == 2 && d.Results[0].GoodputBPS > 0 {
		a, b := d.Results[0], d.Results[1]
		fmt.Fprintf(w, "%s allows %.3f× the goodput of %s\n", b.Medium, b.GoodputBPS/a.GoodputBPS, a.Medium)
	}
	if c.Explain {
		for _, r := range d.Results {
			fmt.Fprintf(w, "derivation for %s, %d bytes:\n", r.Medium, r.Size)
			for i, s := range r.Steps {
				fmt.Fprintf(w, "  %d) %s\n", i+1, s)
			}
		}
	}
}

// framesWord is "1 frame" or "N frames".
func framesWord(n int) string {
	if n == 1 {
		return "1 frame"
	}
	return strconv.Itoa(n) + " frames"
}

// mbit prints a bit rate in Mbit/s with two decimals.
func mbit(bps float64) string { return fmt.Sprintf("%.2f Mbit/s", bps/1e6) }

// trimNum prints v in the fewest digits that read back exactly.
func trimNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// commas prints v rounded to decimals places with thousands separators.
func commas(v float64, decimals int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}
