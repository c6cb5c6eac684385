package units

import (
	"math"
	"testing"
)

// FuzzParseRate: any string gives a rate or an error, never a panic; an
// accepted rate is positive and finite, and a packet rate reads back
// exactly from its own String.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"100M", "1.5G", "64k", "250000", "8000pps", "1e308G", "-1", "NaN", "0x1p3M", " 5 pps", "bit/s", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if !(r.Value > 0) || math.IsInf(r.Value, 0) {
			t.Fatalf("ParseRate(%q) = %+v", s, r)
		}
		if r.PPS {
			back, err := ParseRate(r.String())
			if err != nil || back != r {
				t.Fatalf("ParseRate(%q) = %+v, which reads back as %+v, %v", s, r, back, err)
			}
		}
		_ = FormatBits(r.Value)
	})
}

// FuzzParseSize: an accepted size is a whole, non-negative byte count that
// FormatBytes can print.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1470", "64K", "2M", "1G", "1GB", "8191.5", "-1", "1e30g", "kb", "b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 || n > math.MaxInt64/2 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		_ = FormatBytes(float64(n))
	})
}
