package engine

import (
	"context"
	"sync"
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

// recorder keeps what an Intervals emitted.
type recorder struct{ rows []result.Interval }

func (r *recorder) emit(in result.Interval) { r.rows = append(r.rows, in) }

// sameRows fails unless what was emitted is exactly what was kept.
func sameRows(t *testing.T, emitted, kept []result.Interval) {
	t.Helper()
	if len(emitted) != len(kept) {
		t.Fatalf("emitted %d rows %+v, kept %d %+v", len(emitted), emitted, len(kept), kept)
	}
	for i := range kept {
		if emitted[i] != kept[i] {
			t.Errorf("row %d emitted %+v, kept %+v", i, emitted[i], kept[i])
		}
	}
}

// TestIntervalsHeldRowTakesTheTail: a periodic row is held for the merge
// window after its end; a tail that ends within it is merged into the row
// before it is emitted, so the one row printed is the one kept, with
// every byte.
func TestIntervalsHeldRowTakesTheTail(t *testing.T) {
	var c stats.Counters
	start := time.Unix(1_700_000_000, 0)
	var rec recorder
	iv := NewIntervals(start, time.Second, rec.emit, &Flow{Counters: []*stats.Counters{&c}})
	c.Bytes.Store(1000)
	iv.report(time.Second, true, true) // the periodic report at 1 s
	if len(rec.rows) != 0 {
		t.Fatalf("emitted %+v before the merge window ended", rec.rows)
	}
	c.Bytes.Store(1100) // counted after the report, before the end
	all := iv.Stop(start.Add(1050 * time.Millisecond))
	sameRows(t, rec.rows, all)
	if len(all) != 1 || all[0].Bytes != 1100 || all[0].End != 1.05 {
		t.Errorf("rows %+v, want one of 1100 bytes over 0-1.05 s", all)
	}
}

// TestIntervalsPrintedRowNeverChanged: once the merge window has passed
// and the row was emitted, a short tail with counts is a row of its own,
// emitted too: what was printed is what is kept, and the rows still add up
// to everything counted.
func TestIntervalsPrintedRowNeverChanged(t *testing.T) {
	var c stats.Counters
	start := time.Unix(1_700_000_000, 0)
	var rec recorder
	iv := NewIntervals(start, time.Second, rec.emit, &Flow{Counters: []*stats.Counters{&c}})
	c.Bytes.Store(1000)
	c.Packets.Store(17)
	iv.report(time.Second, true, true)
	iv.release() // the merge window passed
	if len(rec.rows) != 1 {
		t.Fatalf("emitted %+v after the merge window, want the 0-1 s row", rec.rows)
	}
	printed := rec.rows[0]
	c.Bytes.Store(1060)
	c.Packets.Store(18)
	all := iv.Stop(start.Add(1050 * time.Millisecond))
	sameRows(t, rec.rows, all)
	if len(all) != 2 || all[0] != printed || all[0].Packets != 17 || all[1].Packets != 1 || all[1].Bytes != 60 ||
		all[1].Start != 1 || all[1].End != 1.05 {
		t.Errorf("rows %+v, want the printed 0-1 s row of 17 datagrams unchanged, then 1.00-1.05 s of 1", all)
	}
}

// TestIntervalsNoEmptyRowPastTheEnd: a tail in which nothing was counted
// is no row, whether the last row was printed or held: a row after the
// traffic ended would say nothing.
func TestIntervalsNoEmptyRowPastTheEnd(t *testing.T) {
	for _, released := range []bool{false, true} {
		var c stats.Counters
		start := time.Unix(1_700_000_000, 0)
		var rec recorder
		iv := NewIntervals(start, time.Second, rec.emit, &Flow{Counters: []*stats.Counters{&c}})
		c.Bytes.Store(1000)
		iv.report(time.Second, true, true)
		if released {
			iv.release()
		}
		all := iv.Stop(start.Add(1050 * time.Millisecond))
		sameRows(t, rec.rows, all)
		if want := map[bool]float64{false: 1.05, true: 1}[released]; len(all) != 1 || all[0].Bytes != 1000 || all[0].End != want {
			t.Errorf("released %v: rows %+v, want one of 1000 bytes ending at %v s", released, all, want)
		}
	}
}

// TestIntervalsLongTailOwnRow: a tail as long as the merge window is a row
// of its own even while the last row is held, and the held row is
// emitted first, unchanged.
func TestIntervalsLongTailOwnRow(t *testing.T) {
	var c stats.Counters
	start := time.Unix(1_700_000_000, 0)
	var rec recorder
	iv := NewIntervals(start, time.Second, rec.emit, &Flow{Counters: []*stats.Counters{&c}})
	c.Bytes.Store(1000)
	iv.report(time.Second, true, true)
	c.Bytes.Store(1500)
	all := iv.Stop(start.Add(1500 * time.Millisecond))
	sameRows(t, rec.rows, all)
	if len(all) != 2 || all[0].Bytes != 1000 || all[0].End != 1 || all[1].Bytes != 500 || all[1].Start != 1 || all[1].End != 1.5 {
		t.Errorf("rows %+v, want 0-1 s of 1000 bytes, then 1-1.5 s of 500", all)
	}
}

// TestIntervalsSetEndLastRowIsStops: with the end known (SetEnd), no
// periodic row is reported at or after it; Stop's row runs from the last
// boundary before it to the end of the counting, with everything counted.
// The test's clock started long ago, so every timer is already due and the
// reporter ends on its own: no timing in the test.
func TestIntervalsSetEndLastRowIsStops(t *testing.T) {
	var c stats.Counters
	start := time.Now().Add(-time.Hour)
	var mu sync.Mutex
	var rec recorder
	iv := NewIntervals(start, time.Second, func(in result.Interval) { mu.Lock(); rec.emit(in); mu.Unlock() },
		&Flow{Counters: []*stats.Counters{&c}})
	iv.SetEnd(3 * time.Second)
	c.Bytes.Store(100)
	iv.Run(context.Background())
	iv.wg.Wait() // the reporter stops before the boundary at 3 s
	c.Bytes.Store(150)
	all := iv.Stop(start.Add(3004 * time.Millisecond))
	mu.Lock()
	defer mu.Unlock()
	sameRows(t, rec.rows, all)
	if len(all) != 3 || all[0].Bytes != 100 || all[1].Bytes != 0 || all[2].Start != 2 || all[2].End != 3.004 || all[2].Bytes != 50 {
		t.Errorf("rows %+v, want 0-1 s 100 bytes, 1-2 s none, 2-3.004 s 50", all)
	}
}
