package htmlreport

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// The dashboard (internal/web) shows the report's charts: it asks this
// package for them and inserts the SVG it gets, so that a chart reads the
// same in the report and on the dashboard (one drawing code, one set of
// hooks). Beside the charts of a document's section, the dashboard shows
// two kinds of chart the report leaves to its tables: a UDP test's loss
// and jitter over time, and a sweep's rate in datagrams per second.

// DashboardCharts are the charts the dashboard shows for one document:
// the charts of its section of the report (Build), then for a UDP test
// the loss and jitter of the intervals this side received, for a sweep
// its loss-free rate in datagrams per second by size. A chart that has
// nothing to draw is left out.
func DashboardCharts(d Document) ([]*Chart, error) {
	r, err := Build(d.Name, []Document{d})
	if err != nil {
		return nil, err
	}
	var extra []*plotted
	switch d.Kind {
	case "test":
		extra, err = udpQualityPlots(d)
	case "sweep":
		extra, err = sweepRatePlots(d)
	}
	if err != nil {
		return nil, err
	}
	charts := r.Charts()
	for _, x := range extra {
		id := fmt.Sprintf("chart-%02d-%s", len(charts)+1, slug(d.Name+" "+x.title))
		charts = append(charts, &Chart{ID: id, Title: x.title, Caption: x.caption, p: x.p})
	}
	return charts, nil
}

// ComparisonCharts are the charts of the report's comparison section for
// docs, the first the baseline (the goodput of each test side by side,
// each matrix's cells side by side): none when fewer than two documents
// of a sort the comparison reads are given.
func ComparisonCharts(docs []Document) ([]*Chart, error) {
	r := &Report{}
	s, err := r.comparison(docs)
	if err != nil || s == nil {
		return nil, err
	}
	return s.Charts, nil
}

// plotted is a drawn plot with its title and caption.
type plotted struct {
	title, caption string
	p              *plot.Plot
}

// udpQualityView is the keys of a test document the loss and jitter
// charts read. Lost and jitter are absent from a sender's intervals: it
// measured neither.
type udpQualityView struct {
	Test struct {
		Protocol  string  `json:"protocol"`
		Direction string  `json:"direction"`
		Duration  float64 `json:"duration_s"`
		Omit      float64 `json:"omit_s"`
	} `json:"test"`
	Intervals []qualityInterval `json:"intervals"`
	Receiver  *struct {
		Intervals []qualityInterval `json:"intervals"`
	} `json:"receiver"`
}

type qualityInterval struct {
	Start      float64  `json:"start_s"`
	End        float64  `json:"end_s"`
	Flow       string   `json:"flow"`
	Packets    int64    `json:"packets"`
	Lost       *int64   `json:"lost"`
	JitterMS   *float64 `json:"jitter_ms"`
	MeasuredBy string   `json:"measured_by"`
}

// received is the intervals whose loss and jitter a receiver measured:
// the receiver's per-interval report when the peer sent one, else this
// side's own intervals of what it received (not those of a flow it sent,
// even where an older document wrote zeros for them).
func (v *udpQualityView) received() []qualityInterval {
	var out []qualityInterval
	reported := v.Receiver != nil && len(v.Receiver.Intervals) > 0
	if reported {
		out = append(out, v.Receiver.Intervals...)
	}
	for _, in := range v.Intervals {
		forward := in.Flow != "reverse"
		sent := in.MeasuredBy == "sender" || (forward && v.Test.Direction == "send")
		if in.Lost == nil || sent || (forward && reported) {
			continue
		}
		out = append(out, in)
	}
	return out
}

// udpQualityPlots are a UDP test's loss (% of the datagrams expected) and
// jitter (ms) over time, a step per interval a receiver measured, a
// series per flow; none when no receiver's interval is known.
func udpQualityPlots(d Document) ([]*plotted, error) {
	var v udpQualityView
	if err := d.view(&v); err != nil {
		return nil, err
	}
	if v.Test.Protocol != "udp" {
		return nil, nil
	}
	end := math.Inf(1)
	if v.Test.Duration > 0 {
		end = v.Test.Omit + v.Test.Duration
	}
	loss, jitter := map[string]plotter.XYs{}, map[string]plotter.XYs{}
	var flows []string
	for _, in := range v.received() {
		e := math.Min(in.End, end)
		if in.Lost == nil || e <= in.Start {
			continue
		}
		if _, ok := loss[in.Flow]; !ok {
			flows = append(flows, in.Flow)
		}
		lost := float64(max(*in.Lost, 0))
		pct := 0.0
		if total := float64(in.Packets) + lost; total > 0 {
			pct = 100 * lost / total
		}
		loss[in.Flow] = append(loss[in.Flow], plotter.XY{X: in.Start, Y: pct}, plotter.XY{X: e, Y: pct})
		if in.JitterMS != nil {
			j := *in.JitterMS
			jitter[in.Flow] = append(jitter[in.Flow], plotter.XY{X: in.Start, Y: j}, plotter.XY{X: e, Y: j})
		}
	}
	if len(flows) == 0 {
		return nil, nil
	}
	var out []*plotted
	for _, c := range []struct {
		title, axis string
		xys         map[string]plotter.XYs
		caption     string
	}{{"Loss over time", "lost (%)", loss, "the share of the datagrams expected that were lost, as the receiver measured it, interval by interval"},
		{"Jitter over time", "jitter (ms)", jitter, "as the receiver measured it, interval by interval"}} {
		var ss []series
		for _, f := range flows {
			ss = append(ss, series{name: flowName(f), xys: c.xys[f], bare: true, role: flowRole(f)})
		}
		p, err := linesChart(c.title, "time (s)", c.axis, ss)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		if p.Y.Max <= 0 { // nothing lost, no jitter: an axis from 0, not around it
			p.Y.Max = 1
		}
		out = append(out, &plotted{title: c.title, caption: c.caption, p: p})
	}
	return out, nil
}

// flowName names the series of a flow this side received.
func flowName(flow string) string {
	switch flow {
	case "":
		return "received"
	case "reverse":
		return "reverse flow (received)"
	}
	return flow + " flow (received)"
}

func flowRole(flow string) string {
	if flow == "reverse" {
		return roleReverse
	}
	return roleReceived
}

// sweepRateView is the keys of a sweep document its datagram rate chart
// reads.
type sweepRateView struct {
	Medium string `json:"medium"`
	Test   struct {
		Medium string `json:"medium"`
	} `json:"test"`
	Cliffs []struct {
		Below int `json:"below"`
		Above int `json:"above"`
	} `json:"cliffs"`
	Sizes []struct {
		Size    int     `json:"size"`
		RatePPS float64 `json:"rate_pps"`
		LinePPS float64 `json:"line_pps"`
	} `json:"sizes"`
}

// sweepRatePlots is a sweep's loss-free rate in datagrams per second by
// size, drawn as its goodput chart is (sweepChart): a point per size
// where a rate passed, the medium's packet rate dashed (left off with a
// caption when it is more than limitOffScale above the data), the cliffs
// marked.
func sweepRatePlots(d Document) ([]*plotted, error) {
	var v sweepRateView
	if err := d.view(&v); err != nil {
		return nil, err
	}
	sort.SliceStable(v.Sizes, func(i, j int) bool { return v.Sizes[i].Size < v.Sizes[j].Size })
	sc := sweepChart{medium: firstOf(v.Test.Medium, v.Medium), title: "Datagram rate by datagram size", unit: "datagrams/s"}
	for _, z := range v.Sizes {
		x := float64(z.Size)
		if z.RatePPS > 0 {
			sc.measured = append(sc.measured, plotter.XY{X: x, Y: z.RatePPS})
		}
		if z.LinePPS > 0 && plottable(z.LinePPS) {
			sc.limit = append(sc.limit, plotter.XY{X: x, Y: z.LinePPS})
		}
	}
	for _, c := range v.Cliffs {
		sc.cliffs = append(sc.cliffs, sweepCliff{c.Below, c.Above})
	}
	dataMax, lineMax := maxY(sc.measured), maxY(sc.limit)
	if len(sc.limit) > 0 && dataMax > 0 && lineMax > limitOffScale*dataMax {
		sc.note = "the packet rate of " + firstOf(sc.medium, "the medium") + " (up to " + strconv.FormatFloat(lineMax, 'f', 0, 64) +
			" datagrams/s) is " + strconv.FormatFloat(lineMax/dataMax, 'f', 0, 64) + "× the highest rate measured: off this scale, which follows the data (the table lists it)"
		sc.limit = nil
	}
	p, err := sc.plot()
	if err != nil || p == nil {
		return nil, err
	}
	return []*plotted{{title: "Sweep, datagrams/s", caption: sc.note, p: p}}, nil
}
