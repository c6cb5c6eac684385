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
