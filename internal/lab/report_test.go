package lab

import (
	"strings"
	"testing"
)

// A platform that cannot count the kernel's drops at the receiving socket
// says so, rather than reporting a clean "in" count it cannot stand behind.
func TestWarnUncountedKernelDrops(t *testing.T) {
	var r Report
	r.warn("forward", Counts{}, 0, true)
	if len(r.Warnings) != 0 {
		t.Fatalf("known, zero drops: warnings %q", r.Warnings)
	}
	r.warn("forward", Counts{}, 0, false)
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "cannot be counted") {
		t.Fatalf("unknown drops: warnings %q", r.Warnings)
	}
}
