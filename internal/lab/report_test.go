package lab

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/wire/iperf2"
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

// TestReflectorNewFlowOnReusedPort: a source that starts a test again (id
// 1 after more than newFlowAfter ids, a trial on a source port the kernel
// handed out again) gets a flow of its own, so the earlier test's highest
// id does not make the new one's count as reordered; a datagram a few ids
// late stays in its flow.
func TestReflectorNewFlowOnReusedPort(t *testing.T) {
	f := &Reflector{seqs: map[netip.AddrPort]*seqState{}, limit: 8}
	a := netip.MustParseAddrPort("127.0.0.1:40000")
	dg := func(id int64) []byte {
		b := make([]byte, 64)
		iperf2.PutDatagram(b, iperf2.LayoutLegacy, id, time.Now())
		return b
	}
	first := f.flowFor(a, dg(1))
	for id := int64(2); id <= 500; id++ {
		if f.flowFor(a, dg(id)) != first {
			t.Fatalf("id %d opened a new flow", id)
		}
	}
	if f.flowFor(a, dg(450)) != first {
		t.Errorf("a datagram 50 ids late opened a new flow")
	}
	second := f.flowFor(a, dg(1))
	if second == first {
		t.Fatalf("id 1 after 500 stayed in the old flow: its ids would count as reordered")
	}
	if f.flowFor(a, dg(2)) != second {
		t.Errorf("the new test's next id left its flow")
	}
}
