package lab

import (
	"net/netip"
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

// Datagrams from sources past the tracked limit are counted, so the report
// can say their reordering is missing from data.reordered.
func TestReflectorCountsUntrackedSources(t *testing.T) {
	f := &Reflector{seqs: map[netip.AddrPort]*seqState{}, limit: 1}
	a, b := netip.MustParseAddrPort("127.0.0.1:1"), netip.MustParseAddrPort("127.0.0.1:2")
	if f.seqFor(a) == nil || f.seqFor(a) != f.seqFor(a) {
		t.Fatal("the first source is not tracked")
	}
	if f.seqFor(b) != nil || f.seqFor(b) != nil {
		t.Fatal("a source past the limit is tracked")
	}
	if f.untracked != 2 {
		t.Fatalf("untracked = %d, want 2", f.untracked)
	}
}
