package pscheduler

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// isoDuration is pScheduler's own pattern for a Duration (ISO 8601 without
// years, months or repeats).
var isoDuration = regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseDuration reads an ISO 8601 duration as pScheduler writes them
// ("PT10S", "PT0.5S", "P1DT2H", "PT1M30S").
func ParseDuration(s string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return 0, fmt.Errorf("%q is not an ISO 8601 duration such as PT10S", s)
	}
	units := []float64{7 * 24 * 3600, 24 * 3600, 3600, 60, 1}
	var secs float64
	for i, u := range units {
		if m[i+1] == "" {
			continue
		}
		v, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, fmt.Errorf("reading duration %q: %w", s, err)
		}
		secs += v * u
	}
	if secs > float64(math.MaxInt64/int64(time.Second)) {
		return 0, fmt.Errorf("duration %q is too long", s)
	}
	return time.Duration(math.Round(secs * 1e9)), nil
}

// FormatDuration writes d as an ISO 8601 duration in seconds with up to
// microsecond precision, as pScheduler's own tools do: "PT10S",
// "PT0.000042S". Negative durations are written as zero.
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "PT0S"
	}
	us := d.Round(time.Microsecond).Microseconds()
	s := strconv.FormatInt(us/1e6, 10)
	if frac := us % 1e6; frac != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
	}
	return "PT" + s + "S"
}

// FormatWholeSeconds writes d rounded up to whole seconds ("PT17S"), the
// form a tool's duration method returns.
func FormatWholeSeconds(d time.Duration) string {
	return fmt.Sprintf("PT%dS", int64(math.Ceil(d.Seconds())))
}

// parseStart reads the run's start time as pScheduler writes it
// (datetime_as_iso8601: RFC 3339, with or without fractions and zone).
func parseStart(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("schedule start %q is not an ISO 8601 time", s)
}
