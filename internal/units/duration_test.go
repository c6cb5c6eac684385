package units

import (
	"math"
	"testing"
	"time"
)

func TestSeconds(t *testing.T) {
	for v, want := range map[float64]time.Duration{0: 0, 0.25: 250 * time.Millisecond, 60: time.Minute} {
		if got, err := Seconds("-t", v); err != nil || got != want {
			t.Errorf("Seconds(%v) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []float64{-1, math.NaN(), math.Inf(1), 86400*365 + 1} {
		if got, err := Seconds("--time", v); err == nil {
			t.Errorf("Seconds(%v) = %v, want an error", v, got)
		}
	}
	if _, err := Seconds("--time", -1); err == nil || err.Error() != "invalid --time -1: want seconds ≥ 0" {
		t.Errorf("error %v does not name the flag", err)
	}
}

func TestReportInterval(t *testing.T) {
	for v, want := range map[float64]time.Duration{0: 0, 0.01: 10 * time.Millisecond, 1: time.Second} {
		if got, err := ReportInterval(v); err != nil || got != want {
			t.Errorf("ReportInterval(%v) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []float64{-1, 0.005, math.NaN(), math.Inf(1), 86400*365 + 1} {
		if got, err := ReportInterval(v); err == nil {
			t.Errorf("ReportInterval(%v) = %v, want an error", v, got)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{"0.2": 200 * time.Millisecond, "1": time.Second, "200ms": 200 * time.Millisecond, "1m30s": 90 * time.Second, "0": 0} {
		if got, err := ParseDuration(s); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1", "-1s", "fast", "NaN", "9000h", "1e300"} {
		if got, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", s, got)
		}
	}
}
