package reason

import (
	"fmt"
	"math"
	"slices"

	"github.com/wirebench/wirebench/internal/result"
)

// Cliff is a fall of the delivered byte rate from one size to the next
// larger one among the load runs: Below is the last size before the fall,
// Above the first after it (Above = Below + 1 once bisected to the byte).
type Cliff struct {
	Below, Above           int
	RateBelow, RateAbove   float64 // delivered datagrams/s
	RunBelow, RunAbove     int     // their runs' ids
	BytesBelow, BytesAbove float64 // delivered payload bytes/s
}

// Exact says the cliff is bisected to the byte.
func (c Cliff) Exact() bool { return c.Above == c.Below+1 }

// Cliffs finds the cliffs among runs' load and bisection runs: one run per
// size (Best), by size; a fall of the byte rate by more
// than CliffDrop where the larger size hit a limit. The caller bisects a
// cliff that is not Exact by running a size between and reasoning again.
func Cliffs(runs []result.DiagnosisRun) []Cliff {
	by := map[int]result.DiagnosisRun{}
	for _, run := range runs {
		if best, _, ok := Best(runs, run.Size); ok && best.DeliveredPPS > 0 {
			by[run.Size] = best
		}
	}
	sizes := make([]int, 0, len(by))
	for s := range by {
		sizes = append(sizes, s)
	}
	slices.Sort(sizes)
	var out []Cliff
	for i := 0; i+1 < len(sizes); i++ {
		a, b := by[sizes[i]], by[sizes[i+1]]
		ba, bb := a.DeliveredPPS*float64(a.Size), b.DeliveredPPS*float64(b.Size)
		if bb < (1-CliffDrop)*ba && Limited(b) {
			out = append(out, Cliff{Below: a.Size, Above: b.Size, RateBelow: a.DeliveredPPS, RateAbove: b.DeliveredPPS,
				RunBelow: a.ID, RunAbove: b.ID, BytesBelow: ba, BytesAbove: bb})
		}
	}
	return out
}

// Side says on which side of cliff c a run at a size between lies: true
// when its byte rate is nearer the size below's (on a log scale).
func Side(c Cliff, run result.DiagnosisRun) (below bool) {
	bytes := run.DeliveredPPS * float64(run.Size)
	return bytes >= math.Sqrt(c.BytesBelow*c.BytesAbove)
}

// cliffs records each cliff, with the buffer it implies: a packet rate that
// falls by k/(k−1) is a buffer that holds k datagrams below and k−1 above.
func (r *reasoner) cliffs() {
	for _, c := range Cliffs(r.in.Runs) {
		ratio := c.RateBelow / c.RateAbove
		figs := map[string]float64{"last_good_size": float64(c.Below), "first_bad_size": float64(c.Above)}
		text := fmt.Sprintf("The byte rate falls %.0f %% from %d to %d B (%s to %s datagrams/s)", 100*(1-c.BytesAbove/c.BytesBelow),
			c.Below, c.Above, num(c.RateBelow), num(c.RateAbove))
		if !c.Exact() {
			text += fmt.Sprintf(": a size cliff somewhere between, not bisected to the byte")
		}
		conf := result.ConfidenceMedium
		if k := math.Round(ratio / (ratio - 1)); ratio > 1 && k >= 2 && math.Abs(k/(k-1)-ratio) <= 0.08*ratio {
			figs["buffer_bytes"] = k * float64(c.Below)
			text += fmt.Sprintf(": the packet rate falls %.2f×, close to %.0f/%.0f, so a buffer of %.0f bytes holds %.0f datagrams of %d B and only %.0f of %d B",
				ratio, k, k-1, k*float64(c.Below), k, c.Below, k-1, c.Above)
			if c.Exact() {
				conf = result.ConfidenceHigh
			}
		} else if c.Exact() && c.Below == r.mtuPayload() {
			text += fmt.Sprintf(": the %s MTU, above which datagrams are fragmented", r.in.Medium.Name)
			conf = result.ConfidenceHigh
		}
		text += "."
		runs := []int{c.RunBelow, c.RunAbove}
		r.add(result.FindingSizeCliff, conf, figs, runs, text)
		if r.limit.kind == "" || r.limit.kind == "rate" {
			r.setLimit(result.FindingSizeCliff, "a size cliff limits the rate: "+lowerFirst(text), runs)
		}
	}
}

// mtuPayload is the largest UDP payload one frame of the medium carries
// (0 when unknown).
func (r *reasoner) mtuPayload() int {
	for s := 1500; s > 0; s-- {
		if b, ok := r.breakdown(s); ok && len(b.Fragments) == 1 {
			return s
		}
	}
	return 0
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// sizeLimit records the largest size that arrives, where a larger one
// never does: reassembly or an MRU.
func (r *reasoner) sizeLimit() {
	arrived := map[int]int{} // size -> a run of it that arrived
	for _, run := range r.in.Runs {
		if run.Received > 0 {
			arrived[run.Size] = run.ID
		}
	}
	good, bad := 0, 0
	var goodRun, badRun int
	for size, id := range arrived {
		if size > good {
			good, goodRun = size, id
		}
	}
	for _, run := range r.in.Runs {
		// A size of which nothing arrived in any run; one run of a size
		// that arrived in another was spoiled (the runner tries again).
		if _, ok := arrived[run.Size]; !ok && run.Purpose == result.DiagnoseSize && run.Sent > 0 && (bad == 0 || run.Size < bad) {
			bad, badRun = run.Size, run.ID
		}
	}
	if bad == 0 {
		return
	}
	if good >= bad {
		r.cannot("a size limit: nothing of %d B arrived, but %d B, larger, did", bad, good)
		return
	}
	conf, what := result.ConfidenceHigh, fmt.Sprintf("datagrams above %d bytes never arrive", good)
	if bad > good+1 {
		conf, what = result.ConfidenceMedium, fmt.Sprintf("datagrams of %d bytes never arrive while %d-byte ones do (the limit lies between)", bad, good)
	}
	text := fmt.Sprintf("Size limit: %s: a reassembly or MRU limit", what)
	if mtu := r.mtuPayload(); mtu > 0 && good == mtu {
		text += fmt.Sprintf(" (%d B is one %s frame: fragments are not reassembled)", mtu, r.in.Medium.Name)
	}
	r.add(result.FindingSizeLimit, conf, map[string]float64{"max_size": float64(good)}, []int{goodRun, badRun}, text+".")
}
