package sweep

import (
	"math"
	"strconv"

	"github.com/wirebench/wirebench/internal/result"
)

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// t975 is Student's t at 97.5 % for 1 to 30 degrees of freedom (a
// two-sided 95 % interval); above 30 the normal 1.96 is close enough.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// confidence is the mean of rates with its 95 % confidence interval.
func confidence(rates []float64) *result.SweepRepeats {
	n := len(rates)
	m := mean(rates)
	r := &result.SweepRepeats{N: n, RatesPPS: rates, MeanPPS: m, CILowPPS: m, CIHighPPS: m}
	if n < 2 {
		return r
	}
	ss := 0.0
	for _, x := range rates {
		ss += (x - m) * (x - m)
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := 1.96
	if n-1 <= len(t975) {
		t = t975[n-2]
	}
	half := t * sd / math.Sqrt(float64(n))
	r.CILowPPS, r.CIHighPPS = m-half, m+half
	if m > 0 {
		r.CIPercent = 100 * half / m
	}
	r.Unstable = r.CIPercent > UnstableCIPercent
	return r
}

// secs prints a trial length in seconds ("0.5 s", "10 s").
func secs(s float64) string {
	return strconv.FormatFloat(math.Round(s*1000)/1000, 'f', -1, 64) + " s"
}
