package units

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// MaxDuration is the longest time the command line takes: a year (much
// more would overflow a time.Duration).
const MaxDuration = 365 * 24 * time.Hour

// Seconds turns a value in seconds into a duration, from 0 up to a year;
// any other value (negative, NaN, infinite) is an error naming the flag,
// as "invalid --time -1: want seconds ≥ 0".
func Seconds(flag string, v float64) (time.Duration, error) {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > MaxDuration.Seconds() {
		return 0, fmt.Errorf("invalid %s %v: want seconds ≥ 0", flag, v)
	}
	return time.Duration(v * float64(time.Second)), nil
}

// ReportInterval turns an -i value in seconds into the time between
// interval reports: 0 for none, else from 0.01 s up to a year.
func ReportInterval(v float64) (time.Duration, error) {
	if v < 0 || math.IsNaN(v) || (v > 0 && v < 0.01) || v > MaxDuration.Seconds() {
		return 0, fmt.Errorf("invalid interval -i %v: want 0 (none) or 0.01 seconds up to a year", v)
	}
	return time.Duration(v * float64(time.Second)), nil
}

// ParseDuration reads a time typed as text: plain seconds ("0.2", as ping
// -i and iperf -t take them) or a Go duration ("200ms", "1m30s"), from 0
// up to a year.
func ParseDuration(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return Seconds("duration", v)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxDuration {
		return 0, fmt.Errorf("%q is not a time: want seconds (0.2) or a duration (200ms)", s)
	}
	return d, nil
}
