package priority

import (
	"strings"
	"testing"
)

// TestRaiseNeverLowers: a nice of 0 or above asks for nothing, and an
// impossible one is an error.
func TestRaiseNeverLowers(t *testing.T) {
	if o := Raise(0); o.Err != nil {
		t.Errorf("Raise(0) = %+v, want no error", o)
	}
	if o := Raise(5); o.Err != nil || o.Nice > 5 && o.Raised {
		t.Errorf("Raise(5) = %+v", o)
	}
	for _, n := range []int{-21, 20} {
		if o := Raise(n); o.Err == nil || o.Raised {
			t.Errorf("Raise(%d) = %+v, want an error", n, o)
		}
	}
}

// TestOutcomeString says what happened in words.
func TestOutcomeString(t *testing.T) {
	if s := (Outcome{Asked: -10, Nice: -10, Raised: true}).String(); s != "at nice -10" {
		t.Errorf("raised: %q", s)
	}
	s := (Outcome{Asked: -10, Nice: 0, Err: ErrNotPermitted}).String()
	if !strings.Contains(s, "at nice 0") || !strings.Contains(s, "CAP_SYS_NICE") {
		t.Errorf("not permitted: %q", s)
	}
}
