package engine

import (
	"testing"
	"time"
)

// TestParseRunDelay: the run delay is schedstat's second field, in ns; a
// line that is not three numbers is not read.
func TestParseRunDelay(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3464177 8824343 72\n", 8824343 * time.Nanosecond, true},
		{"0 0 0\n", 0, true},
		{"12 99999999999999 3\n", 99999999999999 * time.Nanosecond, true},
		{"12\n", 0, false},
		{"12 -5 3\n", 0, false},
		{"", 0, false},
		{"12 99999999999999999999 3\n", 0, false},
	} {
		got, ok := parseRunDelay([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRunDelay(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
