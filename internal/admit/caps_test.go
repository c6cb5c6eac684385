package admit

import (
	"sync"
	"testing"

	"github.com/wirebench/wirebench/internal/units"
)

// TestBitsSpellsAsUnits: the refusal's rates read as every other rate
// wirebench prints.
func TestBitsSpellsAsUnits(t *testing.T) {
	for _, v := range []float64{0, 1, 999, 1e3, 9.996e3, 64e3, 99.96e3, 1e6, 957.1e6, 1e9, 2.5e9, 1e12, 4e13, 5e15} {
		if got, want := bits(v), units.FormatBits(v); got != want {
			t.Errorf("bits(%g) = %q, units.FormatBits %q", v, got, want)
		}
	}
}

func TestOverSendCap(t *testing.T) {
	for _, tc := range []struct {
		capped        bool
		asked, limit  float64
		refused       bool
		contains, why string
	}{
		{true, 2e9, 1e9, true, "", "above"},
		{true, 0, 1e9, true, "unpaced (-b 0)", "unpaced"},
		{true, 1e9, 1e9, false, "", "at the cap"},
		{false, 2e9, 1e9, false, "", "not capped (authenticated, TCP, or the server only receives)"},
		{true, 2e9, -1, false, "", "no cap (--max-rate 0)"},
	} {
		why := OverSendCap(tc.capped, tc.asked, tc.limit)
		if (why != "") != tc.refused {
			t.Errorf("%s: %q", tc.why, why)
		}
		if tc.refused && tc.asked > 0 && why != "refused a UDP test in which this server would send at 2.00 Gbits/sec: it sends at most 1.00 Gbits/sec to a client that did not authenticate (--max-rate)" {
			t.Errorf("%s: %q", tc.why, why)
		}
	}
}

// TestGateHoldsItsLimit: concurrent takers never hold more than the limit,
// and what they give back is taken again.
func TestGateHoldsItsLimit(t *testing.T) {
	var g Gate
	var mu sync.Mutex
	held, most := 0, 0
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 100 {
				if _, ok := g.Take(3); ok {
					mu.Lock()
					held++
					most = max(most, held)
					mu.Unlock()
					mu.Lock()
					held--
					mu.Unlock()
					g.Give()
				}
			}
		})
	}
	wg.Wait()
	if most > 3 {
		t.Errorf("%d held at once, limit 3", most)
	}
	for i := range 3 {
		if open, ok := g.Take(3); !ok || open != int64(i) {
			t.Fatalf("take %d: open %d ok %v", i, open, ok)
		}
	}
	if open, ok := g.Take(3); ok || open != 3 {
		t.Errorf("fourth take: open %d ok %v, want refused with 3 open", open, ok)
	}
}
