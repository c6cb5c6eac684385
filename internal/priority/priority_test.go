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

// TestPacingSummaryString says what senders got, and how to get real time
// when none had it.
func TestPacingSummaryString(t *testing.T) {
	for _, c := range []struct {
		s    PacingSummary
		want string
	}{
		{PacingSummary{}, ""},
		{PacingSummary{RealTime: 3, MemoryLocked: true}, "real-time (SCHED_FIFO, at most 50 % of a core), its buffers locked in RAM"},
		{PacingSummary{RealTime: 3, Demoted: 1}, "real-time (SCHED_FIFO); 1 of 3 sends used more than 50 % of a core and went back to normal priority"},
		{PacingSummary{Normal: 2, Why: ErrNotPermitted.Error()}, "normal priority: " + ErrNotPermitted.Error()},
		{PacingSummary{RealTime: 1, Normal: 2, Why: "a server"}, "real-time for 1 of 3 sends; the others at normal priority: a server"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}

// TestRunReport: a run with no paced send of its own says nothing, however
// the process's earlier senders were scheduled, and gives no advice.
func TestRunReport(t *testing.T) {
	note(func(s *PacingSummary) { s.Normal++; s.Why = "earlier" })
	if words, advice := RunReport(Summary(), true); words != "" || advice != "" {
		t.Errorf("a run without senders: %q, %q", words, advice)
	}
	before := Summary()
	note(func(s *PacingSummary) { s.Normal++; s.Why = ErrNotPermitted.Error() })
	words, advice := RunReport(before, true)
	if !strings.HasPrefix(words, "normal priority: ") || !strings.Contains(advice, "CAP_SYS_NICE") {
		t.Errorf("a run at normal priority: %q, %q", words, advice)
	}
	if _, advice := RunReport(before, false); advice != "" {
		t.Errorf("advice for a run this host did not spoil: %q", advice)
	}
}
