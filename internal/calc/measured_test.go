package calc

import (
	"math"
	"testing"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/units"
)

// A rate fits a tick only when it is a whole number of datagrams per tick
// within a fiftieth of one (and 0.5 % of the rate): 7,000/s fits every
// tick, 7,108.84/s (83.6 Mbit/s of 1470 bytes) none, 7,030/s none (7.03 per
// 1 ms tick is too far from 7), 25,510/s none (102.04 per 4 ms tick).
func TestTickFits(t *testing.T) {
	tests := []struct {
		pps     float64
		perTick []int // per Ticks entry that fits, in order
	}{
		{7000, []int{7, 28, 70}},
		{83.6e6 / (8 * 1470), nil},
		{7030, nil},
		{25510.2, nil},
		{1001, []int{1, 4, 10}}, // 0.1 % above: 1.001, 4.004 and 10.01 per tick
		{1025, nil},             // 2.5 % above one per 1 ms tick; 4.1 and 10.25 per tick
		{50, nil},               // half a datagram per 10 ms tick
		{100.1, []int{1}},       // 0.1 % above one per 10 ms tick
	}
	for _, tt := range tests {
		fits := tickFits(tt.pps)
		var got []int
		for _, f := range fits {
			got = append(got, f.PerTick)
			if want := float64(f.PerTick) / f.TickS; math.Abs(f.PacketsPerSecond-want) > 1e-9 || math.Abs(f.OffPercent-100*(tt.pps-want)/want) > 1e-9 {
				t.Errorf("tickFits(%v): fit %+v does not add up", tt.pps, f)
			}
		}
		if len(got) != len(tt.perTick) {
			t.Errorf("tickFits(%v) = %v, want per tick %v", tt.pps, fits, tt.perTick)
			continue
		}
		for i := range got {
			if got[i] != tt.perTick[i] {
				t.Errorf("tickFits(%v) = %v, want per tick %v", tt.pps, fits, tt.perTick)
			}
		}
	}
}

// 83.6 Mbit/s of 1470-byte UDP on Fast Ethernet is 87.4 % of its 95.70
// Mbit/s, 7,108.84 frames/s, and fits nothing else; the same payload at
// 407.5 Mbit/s on gigabit is USB 2.0 ECM's ceiling.
func TestMeasure(t *testing.T) {
	s := linerate.Stack{Transport: linerate.UDP, MTU: 1500}
	eth100 := mustMedium(t, "eth100")
	r, err := One(eth100, s, 1470, 0)
	if err != nil {
		t.Fatal(err)
	}
	me, err := Measure(r, eth100, s, units.Rate{Value: 83.6e6}, "83.6M")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(me.PercentOfTheoretical-87.3535) > 0.001 || math.Abs(me.FramesPerSecond-7108.84) > 0.01 || len(me.Fits) != 0 || me.Suspect != "" {
		t.Errorf("83.6M on eth100: %+v", me)
	}
	eth1g := mustMedium(t, "eth1g")
	r, err = One(eth1g, s, 1470, 0)
	if err != nil {
		t.Fatal(err)
	}
	me, err = Measure(r, eth1g, s, units.Rate{Value: 407.5e6}, "407.5M")
	if err != nil {
		t.Fatal(err)
	}
	var media []string
	for _, f := range me.Fits {
		if f.Kind == FitMedium {
			media = append(media, f.Medium)
		}
	}
	if len(media) == 0 || media[0] != "usb2-ecm" {
		t.Errorf("407.5M on eth1g fits media %v, want usb2-ecm first", media)
	}
	me, err = Measure(r, eth1g, s, units.Rate{Value: 7000, PPS: true}, "7000pps")
	if err != nil {
		t.Fatal(err)
	}
	if me.GoodputBPS != 7000*8*1470 || me.PacketsPerSecond != 7000 {
		t.Errorf("7000pps of 1470 bytes: %+v", me)
	}
}
