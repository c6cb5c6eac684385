// Package compare puts saved runs side by side: it takes the figures that
// matter out of a run's wirebench/1 result document (throughput, loss,
// jitter, round-trip times) and states each of a later run as a ratio of
// the baseline's ("B is 88.4 % of A"), with the difference and a 95 %
// confidence interval where the documents hold repeated samples (the
// intervals of a test, the probes of a latency run), and names the runs by
// the labels that tell them apart (Names). It reads JSON and does
// arithmetic; it neither opens a store nor prints.
package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544/findings"
)

// Metric is one figure of a run.
type Metric struct {
	Name string `json:"name"`
	Unit string `json:"unit"` // "bit/s", "%", "ms", "count", "1/s"
	// Value is the run's own figure (a test's summary, not the mean of its
	// intervals).
	Value float64 `json:"value"`
	// HigherIsBetter says which way is an improvement.
	HigherIsBetter bool `json:"higher_is_better"`
	// N, SD are the number and sample standard deviation of the repeated
	// measurements behind Value, when there are at least two; they give
	// the confidence intervals.
	N  int     `json:"n,omitempty"`
	SD float64 `json:"sd,omitempty"`
	// NoSamples says why a figure has no repeated measurements behind it
	// (so no confidence interval), where that is not obvious: e.g. a UDP
	// sender's intervals, which measure no loss or jitter.
	NoSamples string `json:"no_samples,omitempty"`
	// Bound, when not "", says Value is no result but a bound of it, as
	// the tables print it (">= 32", "<= 503", "32-503"): an RFC 2544
	// back-to-back search this host's sending qualified. AtLeast and
	// AtMost are the bound's ends (0 and +Inf where it has none; not in the
	// JSON).
	Bound           string  `json:"bound,omitempty"`
	AtLeast, AtMost float64 `json:"-"`
}

// Metrics takes the comparable figures out of one result document, in a
// fixed order, the headline figure first. Kinds it knows: test,
// under-load, request-response, ping, matrix, sweep, rfc2544.
func Metrics(doc []byte) (kind string, ms []Metric, err error) {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return "", nil, fmt.Errorf("reading a result document: %w", err)
	}
	switch head.Kind {
	case result.KindTest:
		ms, err = decoded(doc, "a test", testMetrics)
	case result.KindUnderLoad:
		ms, err = decoded(doc, "an under-load", underLoadMetrics)
	case result.KindLatency:
		ms, err = decoded(doc, "a latency", latencyMetrics)
	case result.KindPing:
		ms, err = decoded(doc, "a ping", pingMetrics)
	case result.KindMatrix:
		ms, err = decoded(doc, "a matrix", matrixMetrics)
	case result.KindSweep:
		ms, err = decoded(doc, "a sweep", sweepMetrics)
	case result.KindRFC2544:
		ms, err = decoded(doc, "an rfc2544", rfc2544Metrics)
	default:
		return head.Kind, nil, fmt.Errorf("cannot compare runs of kind %q", head.Kind)
	}
	return head.Kind, ms, err
}

// decoded reads doc as a T (what names it in an error) and takes its
// metrics.
func decoded[T any](doc []byte, what string, metrics func(*T) []Metric) ([]Metric, error) {
	var r T
	if err := json.Unmarshal(doc, &r); err != nil {
		return nil, fmt.Errorf("reading %s result: %w", what, err)
	}
	return metrics(&r), nil
}

// underLoadMetrics are a client --latency run's: the test's, then the
// idle and loaded round trips.
func underLoadMetrics(r *result.UnderLoad) []Metric {
	var ms []Metric
	if r.Throughput != nil {
		ms = testMetrics(r.Throughput)
	}
	ms = append(ms, rttMetrics(r.Idle, "idle_")...)
	return append(ms, rttMetrics(r.Loaded, "loaded_")...)
}

// latencyMetrics are a request/response run's.
func latencyMetrics(r *result.Latency) []Metric {
	ms := rttMetrics(r.RTTStats, "")
	return append(ms, Metric{Name: "loss_percent", Unit: "%", Value: r.LossPct},
		Metric{Name: "requests_per_second", Unit: "1/s", Value: r.RequestsPerSecond, HigherIsBetter: true})
}

// pingMetrics are a ping run's, per payload size (suffixed @SIZE when
// there are several).
func pingMetrics(r *result.Ping) []Metric {
	if r.PingRun == nil {
		return nil // none of a run's keys: no sizes
	}
	var ms []Metric
	msOf := func(d time.Duration) float64 { return float64(d) / 1e6 }
	for _, s := range r.Sizes {
		if s == nil {
			continue
		}
		suffix := ""
		if len(r.Sizes) > 1 {
			suffix = "@" + strconv.Itoa(s.Size)
		}
		avg := Metric{Name: "rtt_avg_ms" + suffix, Unit: "ms", Value: msOf(s.RTT.Avg)}
		if s.Received >= 2 {
			// iputils' mdev is the population standard deviation.
			n := float64(s.Received)
			avg.N, avg.SD = s.Received, msOf(s.RTT.Mdev)*math.Sqrt(n/(n-1))
		}
		if s.Received > 0 {
			ms = append(ms, avg, Metric{Name: "rtt_p50_ms" + suffix, Unit: "ms", Value: msOf(s.RTT.P50)})
		}
		ms = append(ms, Metric{Name: "loss_percent" + suffix, Unit: "%", Value: s.LossPct})
	}
	return ms
}

// matrixMetrics are a matrix's, per cell that ran.
func matrixMetrics(r *result.Matrix) []Metric {
	var ms []Metric
	for _, c := range r.Cells {
		if c.Status != "ok" {
			continue // an unsupported or failed cell has no figure to compare
		}
		cell := "_" + c.Protocol + "_" + c.Direction
		ms = append(ms, Metric{Name: "throughput" + cell, Unit: "bit/s", Value: orZero(c.BitsPerSecond), HigherIsBetter: true})
		if c.Protocol == "udp" {
			ms = append(ms, Metric{Name: "loss_percent" + cell, Unit: "%", Value: orZero(c.LossPercent)},
				Metric{Name: "jitter_ms" + cell, Unit: "ms", Value: orZero(c.JitterMS)})
		}
	}
	return ms
}

// sweepMetrics are a sweep's: the rate found per size.
func sweepMetrics(r *result.Sweep) []Metric {
	var ms []Metric
	for _, s := range r.Sizes {
		if s.LimitedByHost {
			continue // a lower bound set by this host, not the device's figure
		}
		if !(s.RatePPS > 0) {
			continue // no rate passed (absent, or 0 in older runs): nothing measured
		}
		m := Metric{Name: "rate_pps@" + strconv.Itoa(s.Size), Unit: "1/s", Value: s.RatePPS, HigherIsBetter: true}
		if s.Repeats != nil {
			m = withSamples(m, s.Repeats.RatesPPS)
		}
		ms = append(ms, m)
	}
	return ms
}

// testMetrics are a test's: throughput, and for UDP loss and jitter,
// with the test's whole intervals as their samples; a TCP sender's
// retransmits.
func testMetrics(r *result.Result) []Metric {
	var tput Metric
	switch {
	case r.Receiver != nil:
		tput = Metric{Name: "throughput", Unit: "bit/s", Value: r.Receiver.BitsPerSecond, HigherIsBetter: true}
	case r.Sender != nil:
		tput = Metric{Name: "throughput", Unit: "bit/s", Value: r.Sender.BitsPerSecond, HigherIsBetter: true}
	default:
		return nil
	}
	s := intervalSamples(r)
	ms := []Metric{withSamples(tput, s.bps)}
	if r.Test.Protocol == result.UDP && r.Receiver != nil {
		total := r.Receiver.Total
		if total == 0 {
			total = r.Receiver.Packets + r.Receiver.Lost
		}
		l := Metric{Name: "loss_percent", Unit: "%"}
		if total > 0 {
			l.Value = 100 * float64(r.Receiver.Lost) / float64(total)
		}
		j := Metric{Name: "jitter_ms", Unit: "ms", Value: r.Receiver.JitterMS}
		if s.sender && len(s.loss) == 0 {
			why := "its intervals are the sender's, which measure no loss or jitter: the figure is the receiver's end-of-test count alone"
			l.NoSamples, j.NoSamples = why, why
		}
		ms = append(ms, withSamples(l, s.loss), withSamples(j, s.jitter))
	}
	if r.Sender != nil && r.Sender.TCP != nil {
		ms = append(ms, Metric{Name: "retransmits", Unit: "count", Value: float64(r.Sender.TCP.Retransmits)})
	}
	return ms
}

// samples are the repeated measurements of a test's whole intervals of
// its main flow; sender says some of them were a sender's, which measure
// no loss or jitter.
type samples struct {
	bps, loss, jitter []float64
	sender            bool
}

// intervalSamples takes a test's samples. A short last interval (the
// test's tail) would weigh as much as a full one: only whole intervals
// count.
func intervalSamples(r *result.Result) samples {
	var full float64
	for _, in := range r.Intervals {
		if in.Flow == "" || in.Flow == "forward" {
			full = max(full, in.End-in.Start)
		}
	}
	// A sender's intervals measure no loss or jitter: older documents
	// stored zeros there (a client that sends), which are no samples.
	oldSender := r.Role == "client" && r.Test.Direction == result.DirSend
	var s samples
	for _, in := range r.Intervals {
		if (in.Flow != "" && in.Flow != "forward") || in.End-in.Start < 0.9*full {
			continue
		}
		s.bps = append(s.bps, in.BitsPerSecond)
		if in.MeasuredBy == result.MeasuredBySender || in.NoReceiverKeys || oldSender {
			s.sender = true
			continue
		}
		if r.Test.Protocol == result.UDP && in.Packets+in.Lost > 0 {
			s.loss = append(s.loss, 100*float64(in.Lost)/float64(in.Packets+in.Lost))
			s.jitter = append(s.jitter, in.JitterMS)
		}
	}
	return s
}

// rttMetrics are the RTT figures of request/response statistics (a
// latency test, or the idle or loaded probe of an under-load one).
func rttMetrics(s result.RTTStats, prefix string) []Metric {
	if s.RTT.Count == 0 {
		return nil
	}
	mean := Metric{Name: prefix + "rtt_mean_ms", Unit: "ms", Value: s.RTT.Mean}
	if n := s.RTT.Count; n >= 2 {
		// stddev_ms is the population standard deviation.
		mean.N, mean.SD = int(n), s.RTT.StdDev*math.Sqrt(float64(n)/float64(n-1))
	}
	return []Metric{mean,
		{Name: prefix + "rtt_p50_ms", Unit: "ms", Value: s.RTT.P50},
		{Name: prefix + "rtt_p99_ms", Unit: "ms", Value: s.RTT.P99}}
}

// withSamples sets m's N and SD from samples when there are at least two.
func withSamples(m Metric, samples []float64) Metric {
	if len(samples) < 2 {
		return m
	}
	var sum float64
	for _, v := range samples {
		sum += v
	}
	mean := sum / float64(len(samples))
	var ss float64
	for _, v := range samples {
		ss += (v - mean) * (v - mean)
	}
	m.N, m.SD = len(samples), math.Sqrt(ss/float64(len(samples)-1))
	return m
}

// Diff is one metric of run B against the baseline A.
type Diff struct {
	Name           string  `json:"name"`
	Unit           string  `json:"unit"`
	HigherIsBetter bool    `json:"higher_is_better"`
	A              float64 `json:"a"`
	B              float64 `json:"b"`
	// Ratio is B/A; absent (nil) when A is 0.
	Ratio *float64 `json:"ratio"`
	// Difference is B−A.
	Difference float64 `json:"difference"`
	// DifferenceCI95 and RatioCI95 are half-widths of 95 % confidence
	// intervals (Welch), present when both runs have repeated samples.
	DifferenceCI95 *float64 `json:"difference_ci95,omitempty"`
	RatioCI95      *float64 `json:"ratio_ci95,omitempty"`
	// NoCI says why there is no interval, when a run's figure has no
	// measured samples (Metric.NoSamples), naming the run.
	NoCI string `json:"no_ci,omitempty"`
	// ABound and BBound are A's and B's figure where it is only a bound
	// (Metric.Bound); then A or B is that bound's end, Ratio is absent,
	// Difference 0, and Bounded says what the bounds tell.
	ABound  string `json:"a_bound,omitempty"`
	BBound  string `json:"b_bound,omitempty"`
	Bounded string `json:"bounded,omitempty"`
	order   int    // with a bound: +1 B above A for sure, -1 below, 0 unclear
}

// Verdicts of Judge.
const (
	Better = "better"
	Worse  = "worse"
	Same   = "same"
)

// Judge says whether run B is Better, Worse or the Same as the baseline A
// in d: the Same when the change is at most tolerance (a share of A, such
// as 0.05) or lies within the 95 % interval of the difference, where there
// is one; otherwise Better or Worse by the metric's direction. When A is
// 0 any change counts.
func Judge(d Diff, tolerance float64) string {
	switch {
	case d.ABound != "" || d.BBound != "":
		return d.boundVerdict()
	case d.Difference == 0:
		return Same
	case d.DifferenceCI95 != nil && math.Abs(d.Difference) <= *d.DifferenceCI95:
		return Same
	case d.Ratio != nil && math.Abs(*d.Ratio-1) <= tolerance:
		return Same
	case (d.Difference > 0) == d.HigherIsBetter:
		return Better
	}
	return Worse
}

// Pair compares every metric the two runs share, in a's order; names
// only one side has are returned apart.
func Pair(a, b []Metric) (diffs []Diff, onlyA, onlyB []string) {
	bm := map[string]Metric{}
	for _, m := range b {
		bm[m.Name] = m
	}
	seen := map[string]bool{}
	for _, ma := range a {
		seen[ma.Name] = true
		mb, ok := bm[ma.Name]
		if !ok {
			onlyA = append(onlyA, ma.Name)
			continue
		}
		diffs = append(diffs, diff(ma, mb))
	}
	for _, m := range b {
		if !seen[m.Name] {
			onlyB = append(onlyB, m.Name)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return diffs, onlyA, onlyB
}

func diff(a, b Metric) Diff {
	if a.Bound != "" || b.Bound != "" {
		return boundDiff(a, b)
	}
	d := Diff{Name: a.Name, Unit: a.Unit, HigherIsBetter: a.HigherIsBetter, A: a.Value, B: b.Value, Difference: b.Value - a.Value}
	if a.Value != 0 {
		r := b.Value / a.Value
		d.Ratio = &r
	}
	switch {
	case a.NoSamples != "":
		d.NoCI = "A: " + a.NoSamples
	case b.NoSamples != "":
		d.NoCI = "B: " + b.NoSamples
	}
	if a.N >= 2 && b.N >= 2 {
		va, vb := a.SD*a.SD/float64(a.N), b.SD*b.SD/float64(b.N)
		se := math.Sqrt(va + vb)
		df := welchDF(va, vb, a.N, b.N)
		t := TQuantile975(df)
		ci := t * se
		d.DifferenceCI95 = &ci
		if a.Value != 0 && b.Value != 0 {
			// Delta method on B/A with the two standard errors.
			r := b.Value / a.Value
			rci := t * math.Abs(r) * math.Sqrt(va/(a.Value*a.Value)+vb/(b.Value*b.Value))
			d.RatioCI95 = &rci
		}
	}
	return d
}

// welchDF is the Welch–Satterthwaite degrees of freedom.
func welchDF(va, vb float64, na, nb int) float64 {
	den := va*va/float64(na-1) + vb*vb/float64(nb-1)
	if den == 0 {
		return float64(na + nb - 2)
	}
	return (va + vb) * (va + vb) / den
}

// t975 are the 0.975 quantiles of Student's t for 1…30 degrees of freedom.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// TQuantile975 is the 0.975 quantile of Student's t with df degrees of
// freedom (the factor of a two-sided 95 % interval): from the table up to
// 30, rounding df down (wider), and from the Cornish–Fisher expansion
// above (error below 0.001).
func TQuantile975(df float64) float64 {
	if df < 1 || math.IsNaN(df) {
		return t975[0]
	}
	if df <= 30 {
		return t975[int(df)-1]
	}
	const z = 1.959963985
	return z + (z*z*z+z)/(4*df) + (5*math.Pow(z, 5)+16*z*z*z+3*z)/(96*df*df)
}

// rfc2544Metrics reads an RFC 2544 run: per size, the NDR and PDR, the
// latency percentiles at each load, the loss at each step and the
// back-to-back length. Figures a run did not measure are left out, so
// that only what both runs measured is compared.
func rfc2544Metrics(r *result.RFC2544) []Metric {
	var ms []Metric
	for _, s := range r.Sizes {
		at := "@" + strconv.Itoa(s.Size)
		if slices.Contains(s.Done, result.RFC2544TestThroughput) {
			// A rate not found (absent, or 0 in runs saved before it
			// was left out) was never measured: nothing to compare.
			if s.NDRPPS > 0 {
				ms = append(ms, Metric{Name: "ndr_pps" + at, Unit: "1/s", Value: s.NDRPPS, HigherIsBetter: true})
			}
			if s.PDRPPS > 0 {
				ms = append(ms, Metric{Name: "pdr_pps" + at, Unit: "1/s", Value: s.PDRPPS, HigherIsBetter: true})
			}
		}
		for _, p := range s.Latency {
			// A round trip, a one-way delay and a delay variation are
			// different figures: each kind has its own names, so that
			// only like is compared with like.
			what := "latency"
			if p.Kind == result.RFC2544OneWay || p.Kind == result.RFC2544DelayVariation {
				what = p.Kind
			}
			load := "_" + strconv.FormatFloat(p.LoadPercent, 'f', -1, 64) + "pct" + at
			ms = append(ms, Metric{Name: what + "_p50_ms" + load, Unit: "ms", Value: p.P50MS},
				Metric{Name: what + "_p99_ms" + load, Unit: "ms", Value: p.P99MS})
		}
		for _, p := range s.LossCurve {
			ms = append(ms, Metric{Name: "loss_percent_" + strconv.FormatFloat(p.OfferedPercent, 'f', -1, 64) + "pct" + at, Unit: "%", Value: p.LossPercent})
		}
		if bb, ok := findings.SizeBound(s); ok && bb.Bound != result.RFC2544BoundExact {
			// No result: the bound its bursts show, where they show one.
			if m, ok := boundMetric("back_to_back_frames"+at, s, bb); ok {
				ms = append(ms, m)
			}
		} else if s.BackToBack != nil {
			m := Metric{Name: "back_to_back_frames" + at, Unit: "frames", Value: s.BackToBackFrames, HigherIsBetter: true}
			if len(s.BackToBack.Searches) > 1 {
				var v []float64
				for _, x := range s.BackToBack.Searches {
					v = append(v, float64(x.Frames))
				}
				m = withSamples(m, v)
			}
			ms = append(ms, m)
		}
	}
	return ms
}

// orZero is *v, or 0 where the figure is null (a matrix cell's loss and
// jitter for TCP).
func orZero(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
