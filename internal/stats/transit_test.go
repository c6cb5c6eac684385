package stats

import (
	"math/rand"
	"sort"
	"testing"
)

// TestTransitPercentiles: percentiles across both halves (transits below
// and above the first one, as a clock offset and queueing give) match the
// exact ones within the histogram's 1 % of the deviation, and are ordered.
func TestTransitPercentiles(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const offset = -3_000_000 // the sender's clock 3 s ahead: transits negative
	var tr Transit
	var all []int64
	tr.AddMicros(offset + 5000) // a slow first datagram: most fall below it
	all = append(all, offset+5000)
	for range 10000 {
		v := int64(offset + 100 + rng.Intn(10000))
		tr.AddMicros(v)
		all = append(all, v)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if tr.Count() != int64(len(all)) || tr.Min() != all[0] || tr.Max() != all[len(all)-1] {
		t.Fatalf("count %d min %d max %d, want %d %d %d", tr.Count(), tr.Min(), tr.Max(), len(all), all[0], all[len(all)-1])
	}
	prev := tr.Min()
	for _, p := range []float64{50, 90, 99, 99.9, 100} {
		got := tr.Percentile(p)
		want := all[int(p/100*float64(len(all)-1))]
		dev := want - (offset + 5000)
		if dev < 0 {
			dev = -dev
		}
		if diff := got - want; diff > dev/50+2 || diff < -dev/50-2 {
			t.Errorf("p%v = %d, want %d (±%d)", p, got, want, dev/50+2)
		}
		if got < prev {
			t.Errorf("p%v = %d below the previous %d", p, got, prev)
		}
		prev = got
	}
	var empty Transit
	if empty.Percentile(50) != 0 || empty.Count() != 0 {
		t.Error("empty transit not empty")
	}
}
