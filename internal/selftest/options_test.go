package selftest

import (
	"testing"
	"time"
)

// TestOptionsCheck: the loopback command's duration and rate are checked.
func TestOptionsCheck(t *testing.T) {
	d, r, err := Options{Seconds: 2, Rate: "100M"}.Check()
	if err != nil || d != 2*time.Second || r.Value != 100e6 {
		t.Errorf("got %v, %+v, %v", d, r, err)
	}
	for _, o := range []Options{{Seconds: 0, Rate: "1M"}, {Seconds: 3601, Rate: "1M"}, {Seconds: 1, Rate: "fast"}} {
		if _, _, err := o.Check(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
