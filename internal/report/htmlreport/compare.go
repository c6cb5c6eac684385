package htmlreport

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/wirebench/wirebench/internal/result"
)

// runLabels names each document in a comparison: a run from the results
// store by the labels that tell it from the other saved runs compared
// (those whose value differs, "link=eth"), a document without such labels by its
// run id or file name. Two documents that would read the same get their
// names added.
func runLabels(docs []Document) []string {
	keys := map[string]bool{}
	var labelled []Document // a file has no labels: it is named by its name
	for _, d := range docs {
		for k := range d.Labels {
			keys[k] = true
		}
		if len(d.Labels) > 0 {
			labelled = append(labelled, d)
		}
	}
	var telling []string
	for k := range keys {
		first, ok0 := labelled[0].Labels[k]
		for _, d := range labelled[1:] {
			if v, ok := d.Labels[k]; v != first || ok != ok0 {
				telling = append(telling, k)
				break
			}
		}
	}
	sort.Strings(telling)
	out := make([]string, len(docs))
	count := map[string]int{}
	for i, d := range docs {
		var parts []string
		for _, k := range telling {
			if v, ok := d.Labels[k]; ok {
				parts = append(parts, k+"="+v)
			}
		}
		out[i] = strings.Join(parts, ",")
		if out[i] == "" {
			out[i] = d.shortName()
		}
		count[out[i]]++
	}
	for i, d := range docs {
		if count[out[i]] > 1 && out[i] != d.shortName() {
			out[i] += " (" + d.shortName() + ")"
		}
	}
	return out
}

// shortName is the run id of a saved run, else the document's name.
func (d Document) shortName() string {
	if d.Run != "" {
		return d.Run
	}
	return d.Name
}

// axisLabel shortens a label for an axis tick, one of n, so that
// neighbours do not overlap (about 60 characters of 12 pt across the plot):
// it keeps the start and the longer end, where names that share a start
// differ; the full label is in the bar's hook and the table.
func axisLabel(s string, n int) string {
	limit := max(8, 60/max(1, n))
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	head := (limit - 1) / 3
	return string(r[:head]) + "…" + string(r[len(r)-(limit-1-head):])
}

// compareBars is the comparison chart's data: per run its goodput in
// Mbit/s, the text written on its bar, and its ratio to the first run
// (the baseline).
type compareBars struct {
	labels []string
	mbps   []float64
	ratios []float64
	texts  []string
}

func newCompareBars(labels []string, mbps []float64) compareBars {
	b := compareBars{labels: labels, mbps: mbps}
	for i, v := range mbps {
		ratio := v / mbps[0]
		b.ratios = append(b.ratios, ratio)
		// Shorter texts as the bars get narrower: each must fit over its
		// bar (a chart is 16 cm wide).
		switch n := len(mbps); {
		case i == 0 && n <= 4:
			b.texts = append(b.texts, fmt.Sprintf("%.2f Mbit/s (baseline)", v))
		case i == 0:
			b.texts = append(b.texts, "baseline")
		case n <= 2:
			b.texts = append(b.texts, fmt.Sprintf("%.2f Mbit/s (%.2f× baseline)", v, ratio))
		case n <= 4:
			b.texts = append(b.texts, fmt.Sprintf("%.2f Mbit/s, %.2f×", v, ratio))
		default:
			b.texts = append(b.texts, fmt.Sprintf("%.2f×", ratio))
		}
	}
	return b
}

// plot draws one bar per run, its label under it, its goodput and ratio
// on it.
func (b compareBars) plot(title string) (*plot.Plot, error) {
	p := newPlot(title, "", "goodput (Mbit/s)")
	ticks := make([]string, len(b.labels))
	attrs := make([][][2]string, len(b.labels))
	for i, l := range b.labels {
		ticks[i] = axisLabel(l, len(b.labels))
		attrs[i] = [][2]string{{"ratio", fmt.Sprintf("%.3f", b.ratios[i])}}
	}
	w := vg.Points(max(12, min(60, 300/float64(len(b.labels)))))
	p.Add(&barPlot{values: b.mbps, texts: b.texts, attrs: attrs, labels: b.labels, width: w, colour: colour(0)})
	p.NominalX(ticks...)
	p.Y.Min = 0
	if tinySpan(p.Y.Min, p.Y.Max) || p.Y.Max <= 0 {
		return nil, nil
	}
	return p, nil
}

// comparison compares documents of the same sort side by side: the
// goodput of each test, and each matrix's cells.
func (r *Report) comparison(docs []Document) (*Section, error) {
	var tdocs []Document
	var vals []float64
	var matrices []result.Matrix
	var mdocs []Document
	for _, d := range docs {
		switch d.Kind {
		case "test", "under-load":
			var t result.Result
			if d.Kind == "test" {
				if err := d.view(&t); err != nil {
					return nil, err
				}
			} else {
				var u result.UnderLoad
				if err := d.view(&u); err != nil || u.Throughput == nil {
					continue
				}
				t = *u.Throughput
			}
			if g, _ := goodput(&t); g > 0 && plottable(g) {
				tdocs, vals = append(tdocs, d), append(vals, g/1e6)
			}
		case "matrix":
			var m result.Matrix
			if err := d.view(&m); err != nil {
				return nil, err
			}
			matrices, mdocs = append(matrices, m), append(mdocs, d)
		}
	}
	if len(vals) < 2 && len(matrices) < 2 {
		return nil, nil
	}
	s := &Section{Name: "Comparison", Kind: "comparison", Subtitle: "the runs side by side, the first as the baseline"}
	s.Summary = &Table{Head: []string{"run", "what", "Mbit/s", "% of the first"}}
	if len(vals) >= 2 {
		b := newCompareBars(runLabels(tdocs), vals)
		for i := range vals {
			s.Summary.Rows = append(s.Summary.Rows, []string{b.labels[i], "goodput", fmt.Sprintf("%.3f", vals[i]), percentOf(vals[i], vals[0])})
		}
		p, err := b.plot("Goodput by document")
		if err := r.add(s, "Goodput by document", p, err); err != nil {
			return nil, err
		}
	}
	if len(matrices) >= 2 {
		if err := r.compareMatrices(s, matrices, runLabels(mdocs)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// compareMatrices draws the matrices' cells side by side, a bar per
// matrix in each cell's group.
func (r *Report) compareMatrices(s *Section, matrices []result.Matrix, mnames []string) error {
	var labels []string
	idx := map[string]int{}
	for _, m := range matrices {
		for _, c := range m.Cells {
			k := strings.ToUpper(c.Protocol) + " " + shortDir(c)
			if _, ok := idx[k]; !ok {
				idx[k] = len(labels)
				labels = append(labels, k)
			}
		}
	}
	groups := make([]bars, len(matrices))
	for i, m := range matrices {
		groups[i] = bars{name: mnames[i], values: make([]float64, len(labels))}
		for _, c := range m.Cells {
			k := strings.ToUpper(c.Protocol) + " " + shortDir(c)
			if c.BitsPerSecond != nil {
				groups[i].values[idx[k]] = *c.BitsPerSecond / 1e6
			}
		}
	}
	for j, l := range labels {
		for i := range groups {
			v := groups[i].values[j]
			s.Summary.Rows = append(s.Summary.Rows, []string{mnames[i], l, fmt.Sprintf("%.3f", v), percentOf(v, groups[0].values[j])})
		}
	}
	p, err := barsChart("Matrix cells by document", "Mbit/s", labels, groups)
	return r.add(s, "Matrix cells by document", p, err)
}
