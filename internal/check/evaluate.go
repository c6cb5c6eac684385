package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/internal/compare"
)

// withDerived adds the figures check computes to a test document (and to
// each matrix cell's test document): receiver.loss_percent, the share of
// datagrams lost, 100·lost/total (total: receiver.total, else packets +
// lost), as compare computes it. It marks each one-way matrix cell
// simultaneous=false (so a selector tells it from its --bidir twin), and
// nulls the figures of RFC 2544 tests a size did not finish.
func withDerived(doc any) any {
	obj, ok := doc.(map[string]any)
	if !ok {
		return doc
	}
	switch obj["kind"] {
	case "test":
		addLossPercent(obj)
	case "matrix":
		cells, _ := obj["cells"].([]any)
		for _, c := range cells {
			if cell, ok := c.(map[string]any); ok {
				if r, ok := cell["result"].(map[string]any); ok {
					addLossPercent(r)
				}
				if _, ok := cell["simultaneous"]; !ok {
					cell["simultaneous"] = false
				}
			}
		}
	case "sweep":
		sizes, _ := obj["sizes"].([]any)
		for _, s := range sizes {
			if size, ok := s.(map[string]any); ok {
				nullNotFound(size, "found", "rate_pps", "rate_pps", "rate_bps", "percent_of_line")
			}
		}
	case "rfc2544":
		sizes, _ := obj["sizes"].([]any)
		for _, s := range sizes {
			if size, ok := s.(map[string]any); ok {
				nullNotDone(size)
				nullBounds(size)
				nullNotFound(size, "ndr_found", "ndr_pps", "ndr_pps", "ndr_bps")
				nullNotFound(size, "pdr_found", "pdr_pps", "pdr_pps", "pdr_bps")
			}
		}
	}
	return doc
}

// notDoneFigures are the figures of an RFC 2544 size that a test leaves
// zero when it did not run.
var notDoneFigures = map[string][]string{
	"throughput": {"ndr_pps", "pdr_pps", "ndr_bps", "pdr_bps"},
	"backtoback": {"back_to_back_frames", "back_to_back_us"},
}

// nullNotFound sets to null the figures of a rate no search found: the
// flag found (a sweep size's "found", an RFC 2544 size's "ndr_found" or
// "pdr_found") is false, or, in a document saved before the flag, the
// rate pps is not above 0 (no passing trial delivers 0). The command
// leaves such figures out, or held a 0 that was never measured; either
// way a bound on them must say "null in this run".
func nullNotFound(size map[string]any, found, pps string, figures ...string) {
	ok, known := size[found].(bool)
	if !known {
		ok = positive(size[pps])
	}
	if !ok {
		for _, k := range figures {
			size[k] = nil
		}
	}
}

// positive says whether v is a JSON number above 0.
func positive(v any) bool {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return err == nil && f > 0
	case float64:
		return n > 0
	}
	return false
}

// nullNotDone sets to null the figures of the tests an RFC 2544 size did
// not finish (absent from its "done"): a zero there was never measured,
// and must not pass a bound such as "ndr_pps <= …".
func nullNotDone(size map[string]any) {
	done := map[string]bool{}
	list, _ := size["done"].([]any)
	for _, d := range list {
		if s, ok := d.(string); ok {
			done[s] = true
		}
	}
	for test, keys := range notDoneFigures {
		if done[test] {
			continue
		}
		for _, k := range keys {
			size[k] = nil // also when left out (a rate is, when 0)
		}
	}
}

func addLossPercent(test map[string]any) {
	rx, ok := test["receiver"].(map[string]any)
	if !ok {
		return
	}
	if tst, _ := test["test"].(map[string]any); tst == nil || tst["protocol"] != "udp" {
		return
	}
	lost, total, packets := num(rx["lost"]), num(rx["total"]), num(rx["packets"])
	if total == 0 {
		total = packets + lost
	}
	if total > 0 {
		rx["loss_percent"] = json.Number(fmt.Sprint(100 * lost / total))
	} else {
		rx["loss_percent"] = json.Number("0")
	}
}

func num(v any) float64 {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	return 0
}

// evaluate judges one criterion on run, against base for a relative one
// (baseErr says why there is no base). Its error is a figure the document
// does not have: a fault of the plan.
func evaluate(c Criterion, run, base *stepRun, baseErr error) (Verdict, error) {
	v := Verdict{Criterion: c}
	val, err := Lookup(run.doc, c.Path)
	be, bound := asBound(err)
	if bound && !c.Relative {
		return judgeBound(v, be, c.Value), nil
	}
	switch {
	case bound: // judged on the bound, against the baseline's figure below
	case errors.Is(err, ErrNull):
		v.Status, v.Note = Error, err.Error()
		return v, nil
	case err != nil:
		return v, err
	}
	v.Value = val
	if !c.Relative {
		v.Bound = c.Value
		v.Status = verdict(holds(val, c.Op, c.Value))
		return v, nil
	}
	if base == nil {
		v.Status, v.Note = Skip, baseErr.Error()
		return v, nil
	}
	bv, err := Lookup(base.doc, c.Path)
	if err != nil {
		v.Status, v.Note = Error, fmt.Sprintf("the baseline run %d has no such figure: %v", base.runID, err)
		return v, nil
	}
	v.Baseline, v.BaselineID, v.Bound = bv, base.runID, c.Value*bv
	if bound {
		return judgeBound(v, be, c.Value*bv), nil
	}
	if bv == 0 {
		v.Status = verdict(holds(val, c.Op, 0))
		v.Note = "the baseline's figure is 0: the bound is 0"
		return v, nil
	}
	d := welch(c.Path, val, bv, run, base)
	v.Ratio, v.RatioCI95 = d.Ratio, d.RatioCI95
	ok := holds(*d.Ratio, c.Op, c.Value)
	v.Status = verdict(ok)
	switch {
	case d.RatioCI95 == nil:
		v.Note = "no 95 % interval: " + noCI(d)
	case ok != holds(*d.Ratio-*d.RatioCI95, c.Op, c.Value) || ok != holds(*d.Ratio+*d.RatioCI95, c.Op, c.Value):
		v.Note = fmt.Sprintf("the bound %s %% lies within the 95 %% interval of the ratio: the difference is not clear from the samples", c.Percent())
	}
	return v, nil
}

func noCI(d compare.Diff) string {
	if d.NoCI != "" {
		return d.NoCI
	}
	return "the figure has no per-interval samples in both runs"
}

func verdict(ok bool) string {
	if ok {
		return Pass
	}
	return Fail
}

// welch compares the figure at path of run (b) with base's (a) through
// compare.Pair, carrying the spread of their per-interval samples where
// compare finds samples behind the very same figure.
func welch(path string, b, a float64, run, base *stepRun) compare.Diff {
	ma := compare.Metric{Name: path, Value: a}
	mb := compare.Metric{Name: path, Value: b}
	ma.N, ma.SD, ma.NoSamples = samples(path, a, base)
	mb.N, mb.SD, mb.NoSamples = samples(path, b, run)
	diffs, _, _ := compare.Pair([]compare.Metric{ma}, []compare.Metric{mb})
	return diffs[0]
}

// sampleMetric maps the last key of a path to the name of compare's
// metric that has the same figure with its samples.
var sampleMetric = map[string]string{
	"bits_per_second": "throughput",
	"loss_percent":    "loss_percent",
	"jitter_ms":       "jitter_ms",
	"rate_pps":        "rate_pps@",
	"avg":             "rtt_avg_ms",
	"mean_ms":         "rtt_mean_ms",
}

// samples returns the number and standard deviation of the repeated
// measurements behind the figure value at path of r, from compare.Metrics
// of the document (or of the test document of the matrix cell the path
// goes into): only when compare's metric is that same figure.
func samples(path string, value float64, r *stepRun) (int, float64, string) {
	name, ok := sampleMetric[last(path)]
	if !ok {
		return 0, 0, ""
	}
	if long, err := resolve(r.doc, path); err == nil {
		path = long
	}
	doc := r.raw
	// A cell's figure, or one inside its result, takes the samples of the
	// cell's test (where compare's figure is that very value).
	if i := strings.Index(path, "]."); strings.HasPrefix(path, "cells[") && i > 0 {
		cell, err := lookupRaw(r.doc, path[:i+1]+".result")
		if err != nil {
			return 0, 0, ""
		}
		doc = cell
	}
	_, ms, err := compare.Metrics(doc)
	if err != nil {
		return 0, 0, ""
	}
	for _, m := range ms {
		if (m.Name == name || strings.HasPrefix(m.Name, strings.TrimSuffix(name, "@")+"@")) && m.Value == value {
			return m.N, m.SD, m.NoSamples
		}
	}
	return 0, 0, ""
}

// lookupRaw returns the JSON of the value at path.
func lookupRaw(doc any, path string) ([]byte, error) {
	segs, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	cur := doc
	for _, s := range segs {
		if s.key != "" {
			if cur, err = child(cur, s.key); err != nil {
				return nil, err
			}
		}
		if s.sel != nil {
			if cur, err = selectOne(cur, s.sel); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(cur)
}
