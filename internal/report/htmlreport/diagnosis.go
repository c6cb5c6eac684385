package htmlreport

import (
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/wirebench/wirebench/internal/result"
)

// diagnosisSection shows a diagnosis: its verdict and findings as tables,
// and the chart its rate findings rest on: what each size delivered, as a
// frame rate and as a payload bit rate (a flat line is the limit).
func (r *Report) diagnosisSection(s *Section, d Document) error {
	var dg result.Diagnosis
	if err := d.view(&dg); err != nil {
		return err
	}
	s.Subtitle = "diagnosis"
	if h := dg.Test.Host; h != "" {
		s.Subtitle += " of " + h
	}
	s.Subtitle += mediumSuffix(dg.Test.Medium)
	s.Warnings = warningsOf(dg.Warnings)
	s.Summary = &Table{Name: "verdict", Head: []string{"verdict"}, Rows: [][]string{{dg.Verdict}}}
	f := &Table{Name: "findings", Title: "Findings", Head: []string{"kind", "confidence", "figures", "evidence runs", "text"}}
	for _, x := range dg.Findings {
		var figs []string
		for k, v := range x.Figures {
			figs = append(figs, k+"="+strconv.FormatFloat(v, 'g', 6, 64))
		}
		for k, v := range x.Words {
			figs = append(figs, k+"="+v)
		}
		sort.Strings(figs)
		runs := make([]string, len(x.EvidenceRuns))
		for i, id := range x.EvidenceRuns {
			runs[i] = strconv.Itoa(id)
		}
		f.Rows = append(f.Rows, []string{x.Kind, x.Confidence, strings.Join(figs, " "), strings.Join(runs, ", "), x.Text})
	}
	s.Tables = append(s.Tables, f)
	if len(dg.CannotTell) > 0 {
		c := &Table{Name: "cannot-tell", Title: "Cannot tell", Head: []string{"question"}}
		for _, q := range dg.CannotTell {
			c.Rows = append(c.Rows, []string{q})
		}
		s.Tables = append(s.Tables, c)
	}
	fps, bps := diagnosisRates(dg.Runs)
	if len(fps) < 2 {
		return nil
	}
	p, err := linesChart("Frame rate by size", "payload size (bytes)", "frames/s", []series{{name: "delivered (the most of a size's runs)", xys: fps, role: "measured"}})
	if err := r.addNoted(s, "Frame rate by size", "a flat line is a frame-rate limit", p, err); err != nil {
		return err
	}
	p, err = linesChart("Bit rate by size", "payload size (bytes)", "Mbit/s", []series{{name: "delivered UDP payload", xys: bps, role: "measured"}})
	if err := r.addNoted(s, "Bit rate by size", "a line that levels off is a byte-rate limit", p, err); err != nil {
		return err
	}
	return r.tickChart(s, dg)
}

// tickChart charts the arrivals of the tick finding's first evidence run
// that kept them, against time: a staircase whose steps are the bursts,
// one tick apart.
func (r *Report) tickChart(s *Section, dg result.Diagnosis) error {
	for _, f := range dg.Findings {
		if f.Kind != result.FindingTick {
			continue
		}
		for _, id := range f.EvidenceRuns {
			for _, run := range dg.Runs {
				if run.ID != id || len(run.ArrivalsMs) < 2 {
					continue
				}
				xys := make(plotter.XYs, len(run.ArrivalsMs))
				for i, ms := range run.ArrivalsMs {
					xys[i] = plotter.XY{X: ms, Y: float64(i + 1)}
				}
				title := "Arrivals against time (run " + strconv.Itoa(run.ID) + ")"
				p, err := linesChart(title, "time (ms)", "datagrams arrived", []series{{name: "arrivals", xys: xys, role: "measured"}})
				return r.addNoted(s, title, "each step is a burst of frames released at one tick; "+
					strconv.FormatFloat(run.FramesPerTick, 'g', 4, 64)+" per tick every "+strconv.FormatFloat(1000/run.TickHz, 'g', 4, 64)+" ms", p, err)
			}
		}
	}
	return nil
}

// diagnosisRates are, per size of the load and bisection runs, the most a
// run delivered: frames/s and payload Mbit/s, by size.
func diagnosisRates(runs []result.DiagnosisRun) (fps, mbit plotter.XYs) {
	best := map[int]float64{}
	for _, run := range runs {
		if (run.Purpose == result.DiagnoseLoad || run.Purpose == result.DiagnoseBisect) && run.DeliveredPPS > best[run.Size] {
			best[run.Size] = run.DeliveredPPS
		}
	}
	sizes := make([]int, 0, len(best))
	for size := range best {
		sizes = append(sizes, size)
	}
	sort.Ints(sizes)
	for _, size := range sizes {
		fps = append(fps, plotter.XY{X: float64(size), Y: best[size]})
		mbit = append(mbit, plotter.XY{X: float64(size), Y: best[size] * float64(size) * 8 / 1e6})
	}
	return fps, mbit
}
