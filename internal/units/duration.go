package units

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// maxDuration is the longest time ParseDuration takes: a year (beyond,
// seconds turned into a time.Duration come near its overflow).
const maxDuration = 365 * 24 * time.Hour

// ParseDuration parses a time given as text: plain seconds ("0.2", as
// ping -i and iperf -t take them) or a Go duration ("200ms", "1m30s"),
// from 0 up to a year.
func ParseDuration(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > maxDuration.Seconds() {
			return 0, fmt.Errorf("invalid duration %v: want seconds ≥ 0", v)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > maxDuration {
		return 0, fmt.Errorf("%q is not a time: want seconds (0.2) or a duration (200ms)", s)
	}
	return d, nil
}
