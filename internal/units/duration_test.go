package units

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0": 0, "0.2": 200 * time.Millisecond, "10": 10 * time.Second,
		"200ms": 200 * time.Millisecond, "1m30s": 90 * time.Second, "8760h": 8760 * time.Hour,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "-5ms", "NaN", "+Inf", "1e9", "8761h", "fast"} {
		if got, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, got)
		}
	}
	if _, err := ParseDuration("-1"); err == nil || err.Error() != "invalid duration -1: want seconds ≥ 0" {
		t.Errorf("ParseDuration(-1): %v", err)
	}
}
