package engine

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/stats"
)

// TestIntervalsWithoutPeriod: with no -i the whole test is one interval,
// returned for the result but not emitted as a line (iperf prints only the
// summary then).
func TestIntervalsWithoutPeriod(t *testing.T) {
	var c stats.Counters
	start := time.Unix(1_700_000_000, 0)
	var emitted []result.Interval
	iv := NewIntervals(start, 0, func(in result.Interval) { emitted = append(emitted, in) }, &Flow{Counters: []*stats.Counters{&c}})
	iv.Run(context.Background())
	c.Bytes.Store(1000)
	c.Packets.Store(10)
	all := iv.Stop(start.Add(2 * time.Second))
	if len(emitted) != 0 {
		t.Errorf("emitted %+v without a period", emitted)
	}
	if len(all) != 1 || all[0].Bytes != 1000 || all[0].Packets != 10 || all[0].Start != 0 || all[0].End != 2 || all[0].BitsPerSecond != 4000 {
		t.Errorf("intervals %+v, want one of 1000 bytes over 0-2 s at 4000 bit/s", all)
	}
}

// TestIntervalsTailEmitted: with a period, the final partial interval is
// emitted, and the intervals add up to the total.
func TestIntervalsTailEmitted(t *testing.T) {
	var c stats.Counters
	start := time.Now()
	var emitted []result.Interval
	iv := NewIntervals(start, time.Hour, func(in result.Interval) { emitted = append(emitted, in) }, &Flow{Counters: []*stats.Counters{&c}})
	iv.Run(context.Background())
	c.Bytes.Store(500)
	all := iv.Stop(start.Add(30 * time.Minute))
	if len(emitted) != 1 || len(all) != 1 || emitted[0] != all[0] || all[0].Bytes != 500 || all[0].End != 1800 {
		t.Errorf("emitted %+v, all %+v; want the one 0-1800 s interval of 500 bytes, emitted", emitted, all)
	}
}

// TestIntervalsOmitBoundaries: -O puts an interval end exactly at the end
// of the omitted period, between periods or without a period.
func TestIntervalsOmitBoundaries(t *testing.T) {
	for _, tc := range []struct {
		period, omit time.Duration
		want         []time.Duration
	}{
		{time.Second, 1500 * time.Millisecond, []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second, 3 * time.Second}},
		{time.Second, time.Second, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}},
		{0, 2 * time.Second, []time.Duration{2 * time.Second}},
		{0, 0, nil},
	} {
		iv := &Intervals{period: tc.period}
		iv.SetOmit(tc.omit)
		var got []time.Duration
		for last := time.Duration(0); len(got) < 4; {
			at, ok := iv.next(last)
			if !ok {
				break
			}
			got, last = append(got, at), at
		}
		if len(got) != len(tc.want) {
			t.Errorf("period %v omit %v: boundaries %v, want %v", tc.period, tc.omit, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("period %v omit %v: boundaries %v, want %v", tc.period, tc.omit, got, tc.want)
				break
			}
		}
	}
}

// TestIntervalsOmitted: without -i, the omitted period is its own interval,
// marked and emitted (iperf3 shows it as "(omitted)"); the rest is the
// second interval, not marked, and not emitted.
func TestIntervalsOmitted(t *testing.T) {
	var c stats.Counters
	start := time.Now()
	emitted := make(chan result.Interval, 4)
	iv := NewIntervals(start, 0, func(in result.Interval) { emitted <- in }, &Flow{Counters: []*stats.Counters{&c}})
	iv.SetOmit(50 * time.Millisecond)
	c.Bytes.Store(100)
	iv.Run(context.Background())
	first := <-emitted
	c.Bytes.Store(300)
	all := iv.Stop(start.Add(time.Hour))
	if !first.Omitted || first.Bytes != 100 || first.End != 0.05 {
		t.Errorf("emitted %+v, want the omitted 0-0.05 s interval of 100 bytes", first)
	}
	if len(all) != 2 || all[0] != first || all[1].Omitted || all[1].Bytes != 200 || all[1].Start != 0.05 || all[1].End != 3600 {
		t.Errorf("intervals %+v, want the omitted one, then 200 bytes over 0.05-3600 s, not omitted", all)
	}
	if s, ok := iv.OmittedCounts(&c); !ok || s.Bytes != 100 {
		t.Errorf("counts at the end of the omitted period %+v (%v), want 100 bytes", s, ok)
	}
	select {
	case in := <-emitted:
		t.Errorf("emitted %+v after the omitted period without a period", in)
	default:
	}
}
