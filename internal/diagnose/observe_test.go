package diagnose

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

func TestObserve(t *testing.T) {
	spec := sweep.Spec{Size: 1470, RatePPS: 20000, Duration: time.Second}
	// A far end pushed past 7,000/s: its count over its window, refined by
	// the pace timed from its queue where the two agree.
	o := result.SweepOutcome{Sent: 20000, OfferedPPS: 20000, Received: 7101, ReceiveSeconds: 1.0143, ServicePPS: 7000.5,
		RTT: &result.SweepRTT{Min: 0.2}, RTTs: []time.Duration{time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 201 * time.Millisecond}}
	run := observe(3, result.DiagnoseLoad, spec, o, 81000)
	if run.DeliveredPPS != 7000.5 || !run.Queued || run.RTTLateMs != 201 || run.RTTMinMs != 0.2 || run.ID != 3 {
		t.Errorf("run %+v", run)
	}
	if run.LossPercent < 64.49 || run.LossPercent > 64.5 {
		t.Errorf("loss %v %%, want 64.495", run.LossPercent)
	}
	// A queue pace far from the count is not taken.
	o.ServicePPS = 215
	if run := observe(1, result.DiagnoseLoad, spec, o, 81000); run.DeliveredPPS < 6999 || run.DeliveredPPS > 7001 {
		t.Errorf("delivered %v, want the count over the window, 7,000", run.DeliveredPPS)
	}
	// Never more than we offered: a window our stall shortened.
	o = result.SweepOutcome{Sent: 100, OfferedPPS: 196, Received: 100, ReceiveSeconds: 0.19}
	if run := observe(1, result.DiagnoseSize, sweep.Spec{Size: 8000, RatePPS: 200, Packets: 100}, o, 15000); run.DeliveredPPS != 196 {
		t.Errorf("delivered %v, want at most the 196/s we sent", run.DeliveredPPS)
	}
}

func TestLateRTTSettled(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	var rising, full []time.Duration
	for i := range 300 {
		rising = append(rising, ms(float64(i)/3))                      // 0 to 100 ms: still filling
		full = append(full, ms(min(float64(i), 150)+0.5*float64(i%2))) // full at 150 ms from the middle on
	}
	if m, settled := lateRTT(rising); settled || m < 83 || m > 84 {
		t.Errorf("rising: %v ms, settled %v; want 83.3, not settled", m, settled)
	}
	if m, settled := lateRTT(full); !settled || m < 150 || m > 150.5 {
		t.Errorf("full: %v ms, settled %v; want 150, settled", m, settled)
	}
	if _, settled := lateRTT(full[:8]); settled {
		t.Error("eight round trips are too few to settle")
	}
}

func TestExcerpt(t *testing.T) {
	var arr []time.Duration
	for i := range 2000 {
		arr = append(arr, time.Duration(i/7)*time.Millisecond+time.Duration(i%7)*time.Microsecond)
	}
	ex := excerpt(arr, 20*time.Millisecond)
	// From the middle (arrival 1000, the last of its tick's 7): it and the
	// 20 ticks that follow within 20 ms, 141 arrivals, the first at 0.
	if len(ex) != 141 || ex[0] != 0 || ex[len(ex)-1] > 20 {
		t.Errorf("%d arrivals, first %v, last %v", len(ex), ex[0], ex[len(ex)-1])
	}
	if ex := excerpt(arr, time.Second); len(ex) != excerptMax {
		t.Errorf("%d arrivals kept, want at most %d", len(ex), excerptMax)
	}
}
