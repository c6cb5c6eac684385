package sharedcause

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

func TestOfKnowsItsWords(t *testing.T) {
	drops := SocketDropsWarning("12 datagrams", true)
	cpu := CPULimitWarning(97, 1, 2, "receiving with 3 datagrams lost")
	for _, tc := range []struct {
		w     string
		c     Cause
		owned bool
	}{
		{drops, SocketDrops, false},
		{"stream 3: " + drops, SocketDrops, false},
		{cpu, CPULimit, false},
		{"the peer sent no report", 0, true},
		{"a stream 3: " + drops, 0, true},
	} {
		c, ok := Of(tc.w)
		if ok == tc.owned || ok && c != tc.c {
			t.Errorf("Of(%q) = %v, %v", tc.w, c, ok)
		}
	}
	if !strings.Contains(drops, "may be theirs") || strings.Contains(SocketDropsWarning("12 datagrams", false), "theirs") {
		t.Errorf("the shared socket said or not: %q", drops)
	}
	if got := Own([]string{"x", drops, cpu, "y"}); len(got) != 2 || got[0] != "x" || got[1] != "y" {
		t.Errorf("Own = %q", got)
	}
}

// fakeClock drives a tally: its time, and its one timer fired by hand.
type fakeClock struct {
	now   time.Time
	due   time.Duration
	fire  func()
	armed int
}

func newTestTally(lines *[]string) (*Tally, *fakeClock) {
	c := &fakeClock{now: time.Unix(1_000_000, 0)}
	tl := NewTally(func(l string) { *lines = append(*lines, l) }, time.Minute)
	tl.now = func() time.Time { return c.now }
	tl.after = func(d time.Duration, f func()) func() bool {
		c.due, c.fire = d, f
		c.armed++
		return func() bool { c.fire = nil; return true }
	}
	return tl, c
}

func dropped(n int) *result.Result {
	r := result.New("server")
	r.Warn("the peer's clock is 3 s ahead")
	r.Warn(SocketDropsWarning("12 datagrams", true))
	for i := range n { // a -P group: each stream says it
		r.Warn("stream " + string(rune('1'+i)) + ": " + SocketDropsWarning("12 datagrams", true))
	}
	return r
}

// A cause is said when it first appears, then at most once per period
// with the count of tests since, by the next test past the period or the
// timer, and at Close; each test counts once however many streams say it.
func TestTallySaysOncePerPeriod(t *testing.T) {
	var lines []string
	tl, c := newTestTally(&lines)
	tl.Add(7, dropped(2))
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "WARNING: server: test 7: our server socket dropped 12 datagrams") {
		t.Fatalf("first appearance said as %q", lines)
	}
	for id := 8; id < 20; id++ {
		c.now = c.now.Add(time.Second)
		tl.Add(id, dropped(0))
	}
	if len(lines) != 1 || c.armed != 1 || c.due != time.Minute-time.Second {
		t.Fatalf("within the period: %d lines, timer armed %d times, due in %v", len(lines), c.armed, c.due)
	}
	c.now = c.now.Add(48 * time.Second) // a minute after the first line
	c.fire()
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "WARNING: server: 12 more tests had datagrams dropped") ||
		!strings.Contains(lines[1], "(1m0s ago); 13 in all since it was first said (1m0s ago)") {
		t.Fatalf("the period's count: %q", lines[1:])
	}
	if c.armed != 1 {
		t.Errorf("the timer armed again with nothing pending")
	}
	c.now = c.now.Add(90 * time.Second) // past the period: the next test says it
	tl.Add(30, dropped(1))
	if len(lines) != 3 || !strings.HasPrefix(lines[2], "WARNING: server: 1 more test had") || !strings.Contains(lines[2], "14 in all") {
		t.Fatalf("a test past the period: %q", lines[2:])
	}
	tl.Add(31, result.New("server")) // no cause: nothing said, nothing counted
	c.now = c.now.Add(time.Second)
	tl.Add(32, dropped(0))
	tl.Close()
	if len(lines) != 4 || !strings.Contains(lines[3], "1 more test had") || !strings.Contains(lines[3], "15 in all") {
		t.Fatalf("at close: %q", lines[3:])
	}
	tl.Close()
	if len(lines) != 4 {
		t.Errorf("a second close said %q", lines[4:])
	}
}
