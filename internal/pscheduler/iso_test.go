package pscheduler

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"PT10S": 10 * time.Second, "PT0.5S": 500 * time.Millisecond, "PT1M30S": 90 * time.Second,
		"P1DT2H": 26 * time.Hour, "P1W": 7 * 24 * time.Hour, "P0D": 0, "PT0.000042S": 42 * time.Microsecond,
	}
	for s, want := range good {
		got, err := ParseDuration(s)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "P", "PT", "10s", "PT-1S", "P1M", "P1Y", "PT1S5", "R5PT1M"} {
		if _, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) accepted", s)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	cases := map[time.Duration]string{
		0: "PT0S", 10 * time.Second: "PT10S", 42 * time.Microsecond: "PT0.000042S",
		1500 * time.Millisecond: "PT1.5S", 90 * time.Second: "PT90S", 1234 * time.Nanosecond: "PT0.000001S",
	}
	for d, want := range cases {
		got := FormatDuration(d)
		if got != want || !schemaDuration.MatchString(got) {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		back, err := ParseDuration(got)
		if err != nil || back != d.Round(time.Microsecond) {
			t.Errorf("ParseDuration(FormatDuration(%v)) = %v, %v", d, back, err)
		}
	}
	if got := FormatWholeSeconds(11*time.Second + time.Millisecond); got != "PT12S" {
		t.Errorf("FormatWholeSeconds rounds %q, want up to PT12S", got)
	}
}

func TestParseStart(t *testing.T) {
	for _, s := range []string{"2026-12-01T18:40:15Z", "2026-12-01T18:40:15.123456+00:00", "2026-12-01T18:40:15-05:00"} {
		if _, err := parseStart(s); err != nil {
			t.Errorf("parseStart(%q): %v", s, err)
		}
	}
	if _, err := parseStart("tomorrow"); err == nil {
		t.Error("parseStart accepted tomorrow")
	}
}
