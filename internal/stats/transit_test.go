package stats

import (
	"time"

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

// TestReceiverKeepsTransitOnlyWhenAsked: a receiver records transits only
// with KeepTransit (an iperf3 receiver's report has no place for them),
// and a zero stamp is counted once, by the jitter, in either case.
func TestReceiverKeepsTransitOnlyWhenAsked(t *testing.T) {
	at := time.Unix(1000, 0)
	for _, keep := range []bool{false, true} {
		r := NewUDPReceiver(1)
		r.KeepTransit = keep
		r.Datagram(1, 100, at, at.Add(-3*time.Millisecond))
		r.Datagram(2, 100, at.Add(time.Millisecond), at.Add(-time.Millisecond))
		r.Datagram(3, 100, at.Add(2*time.Millisecond), time.Time{})
		want := int64(0)
		if keep {
			want = 2
		}
		if got := r.Transit.Count(); got != want {
			t.Errorf("keep %v: %d transits, want %d", keep, got, want)
		}
		if keep && (r.Transit.Min() != 2000 || r.Transit.Max() != 3000) {
			t.Errorf("transit min %d max %d µs, want 2000 and 3000", r.Transit.Min(), r.Transit.Max())
		}
		if r.Jitter.ZeroStamps() != 1 || r.Jitter.Samples() != 1 {
			t.Errorf("keep %v: zero stamps %d, jitter samples %d; want 1 and 1", keep, r.Jitter.ZeroStamps(), r.Jitter.Samples())
		}
	}
}
