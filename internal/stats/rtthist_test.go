package stats

import (
	"math"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		ms   []float64         // samples in ms
		want result.RTTSummary // without Bins
	}{
		{"empty", nil, result.RTTSummary{}},
		{"one", []float64{2}, result.RTTSummary{Count: 1, Min: 2, Max: 2, Mean: 2, P50: 2, P90: 2, P99: 2, P999: 2}},
		{"1..100", seq(1, 100), result.RTTSummary{Count: 100, Min: 1, Max: 100, Mean: 50.5, StdDev: math.Sqrt((100*100 - 1) / 12.0),
			P50: 50, P90: 90, P99: 99, P999: 100}},
		{"1..1000 µs", scale(seq(1, 1000), 0.001), result.RTTSummary{Count: 1000, Min: 0.001, Max: 1, Mean: 0.5005,
			StdDev: math.Sqrt((1000*1000-1)/12.0) / 1000, P50: 0.5, P90: 0.9, P99: 0.99, P999: 0.999}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRTTRecorder()
			for _, v := range tt.ms {
				r.Record(time.Duration(v * 1e6))
			}
			got := r.Summary()
			var n int64
			for _, b := range got.Bins {
				n += b.Count
				if b.From >= b.To || b.Count <= 0 {
					t.Errorf("bad bin %+v", b)
				}
			}
			if n != tt.want.Count {
				t.Errorf("bins hold %d samples, want %d", n, tt.want.Count)
			}
			check := func(name string, got, want float64) {
				// exact values within float rounding; percentiles within
				// the histogram's 0.1 %.
				if math.Abs(got-want) > want*0.001+1e-9 {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
			check("count", float64(got.Count), float64(tt.want.Count))
			check("min", got.Min, tt.want.Min)
			check("max", got.Max, tt.want.Max)
			check("mean", got.Mean, tt.want.Mean)
			check("stddev", got.StdDev, tt.want.StdDev)
			check("p50", got.P50, tt.want.P50)
			check("p90", got.P90, tt.want.P90)
			check("p99", got.P99, tt.want.P99)
			check("p99.9", got.P999, tt.want.P999)
		})
	}
}

func TestRecorderClamps(t *testing.T) {
	r := NewRTTRecorder()
	r.Record(0)
	r.Record(2 * time.Minute)
	s := r.Summary()
	if s.Count != 2 || s.Min != 0 || s.Max != 120000 || s.P50 < 0 || s.P999 > 120000 {
		t.Errorf("summary %+v", s)
	}
}

func TestBinsAreCoarse(t *testing.T) {
	r := NewRTTRecorder()
	for i := range 10000 {
		r.Record(time.Duration(1e6 + i*1000)) // 1 ms to 11 ms
	}
	bins := r.Summary().Bins
	// 1..11 ms spans log10(11) decades: about 21 bins at 20 per decade.
	if len(bins) < 20 || len(bins) > 23 {
		t.Errorf("%d bins, want about 21", len(bins))
	}
}

func seq(a, b int) []float64 {
	var s []float64
	for i := a; i <= b; i++ {
		s = append(s, float64(i))
	}
	return s
}

func scale(s []float64, f float64) []float64 {
	for i := range s {
		s[i] *= f
	}
	return s
}
