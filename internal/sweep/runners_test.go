package sweep

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
)

// SessionRunner judges a trial on the far end's report when one came
// back, else on the device's own counts, else on nothing (all lost); the
// device's figures ride along without the session's transcript; and an
// error from Run (the device failed) keeps the trial's figures beside it.
func TestSessionRunnerCountedBy(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	sender := &result.Sender{Packets: 1001, PacketsPerSecond: 1000, Seconds: 1}
	dev := &result.Device{Shell: "zephyr", Role: "server", Packets: n(990), Lost: n(10), Transcript: []string{"a", "b"}}
	counts := func(d result.Device) (int64, int64, bool) {
		if d.Packets == nil || d.Lost == nil {
			return 0, 0, false
		}
		return *d.Packets, *d.Lost, true
	}
	devErr := errors.New("device: no answer")
	for _, c := range []struct {
		name     string
		res      *result.Result
		runErr   error
		counts   func(result.Device) (int64, int64, bool)
		by       string
		received int64
		loss     float64
		noReport bool
	}{
		{"peer report", &result.Result{Sender: sender, Device: dev, Receiver: &result.Receiver{Packets: 1001, Total: 1001, Seconds: 1}}, nil, counts, result.CountedByPeer, 1001, 0, false},
		{"device counts", &result.Result{Sender: sender, Device: dev}, nil, counts, result.CountedByDevice, 990, 1, false},
		{"device without counts", &result.Result{Sender: sender, Device: &result.Device{Shell: "esp-idf", Role: "server"}}, nil, counts, "", 0, 100, true},
		{"no device reader", &result.Result{Sender: sender, Device: dev}, nil, nil, "", 0, 100, true},
		{"device failed", &result.Result{Sender: sender, Device: dev}, devErr, counts, result.CountedByDevice, 990, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked session.ClientConfig
			r := SessionRunner{Base: session.ClientConfig{Host: "192.0.2.1", Port: 5001}, DeviceCounts: c.counts,
				Run: func(_ context.Context, _ Spec, cfg session.ClientConfig) (*result.Result, error) {
					asked = cfg
					return c.res, c.runErr
				}}
			o, err := r.Trial(context.Background(), Spec{Size: 1000, RatePPS: 1000, Duration: time.Second})
			if !errors.Is(err, c.runErr) {
				t.Fatalf("error %v, want %v", err, c.runErr)
			}
			if !asked.UDP || asked.Length != 1000 || asked.Rate.Value != 1000 || !asked.Rate.PPS || asked.Duration != time.Second {
				t.Errorf("the trial's test: %+v", asked)
			}
			if o.CountedBy != c.by || o.Received != c.received || o.NoReport != c.noReport || LossPercent(o) != c.loss {
				t.Errorf("counted by %q, received %d, no report %v, loss %v %%; want %q, %d, %v, %v %%", o.CountedBy, o.Received, o.NoReport, LossPercent(o), c.by, c.received, c.noReport, c.loss)
			}
			if o.Device == nil || len(o.Device.Transcript) != 0 || o.Device.Shell != c.res.Device.Shell {
				t.Errorf("device %+v: want the figures without the transcript", o.Device)
			}
			if c.by == result.CountedByDevice && !strings.Contains(strings.Join(o.Warnings, "\n"), "the device's own") {
				t.Errorf("warnings %q: want the note that the device counted", o.Warnings)
			}
		})
	}
	if len(dev.Transcript) != 2 {
		t.Errorf("the result's own device record was changed: %+v", dev)
	}
}

// A runner error mid-sweep (a device that went silent) ends the sweep:
// the sizes finished stay, the size under way is kept as unfinished with
// the trials it ran, and the error is in the document.
func TestErrorKeepsFinishedAndUnfinished(t *testing.T) {
	calls := 0
	fail := errors.New("the device (zephyr) failed: no answer")
	r := RunnerFunc(func(_ context.Context, s Spec) (result.SweepOutcome, error) {
		if s.Size == 200 {
			if calls++; calls == 2 { // 100 B took one trial (a pass at the top), 200 B one (a loss)
				return result.SweepOutcome{}, fail
			}
		}
		n := int64(s.RatePPS * s.Duration.Seconds())
		o := result.SweepOutcome{Sent: n, OfferedPPS: s.RatePPS, Received: n, Total: n, SendSeconds: s.Duration.Seconds()}
		if s.Size == 200 {
			o.Received, o.Lost = n/2, n-n/2
		}
		return o, nil
	})
	cfg := Config{Sizes: []int{100, 200, 300}, MaxPPS: func(int) float64 { return 1000 }, Trial: time.Second,
		Sleep: func(context.Context, time.Duration) error { return nil }}
	res := NewResult(result.SweepTest{})
	err := Run(context.Background(), cfg, r, res)
	if !errors.Is(err, fail) || !strings.Contains(res.Error, "no answer") {
		t.Fatalf("error %v, document error %q", err, res.Error)
	}
	if len(res.Sizes) != 1 || res.Sizes[0].Size != 100 || !res.Sizes[0].Confirmed {
		t.Errorf("sizes %+v: want 100 B finished", res.Sizes)
	}
	if u := res.Unfinished; u == nil || u.Size != 200 || len(u.TrialLog) != 1 {
		t.Errorf("unfinished %+v: want 200 B with its one trial", u)
	}
}

// servicePPS times a far end's own rate from what it delivered while it
// held a queue, whatever our sender and the reflector did: a FIFO server
// of 5000/s fed at 4950/s by a sender that stalls 40 ms and catches up in
// a burst, with deliveries the reflector sent up to 30 ms late in runs,
// is timed within 0.2 % of 5000/s; the same sender against a far end of
// 4800/s (a queue all along) gives 4800/s; one that never queued gives 0.
func TestServicePPS(t *testing.T) {
	trace := func(offered, service float64, stall bool, late bool) ([]time.Duration, []time.Duration) {
		var rtts, arr []time.Duration
		free := 0.0 // when the server is next free, in seconds
		n := int(offered * 2)
		for i := 0; i < n; i++ {
			tx := float64(i) / offered
			if stall && tx > 0.5 && tx < 0.54 {
				continue // sent in the burst at 0.54 s
			}
			if stall && i > 0 && float64(i-1)/offered < 0.54 && tx >= 0.54 {
				// the burst: everything due during the stall leaves now
				for j := int(0.5*offered) + 1; j < i; j++ {
					dep := max(0.54, free) + 1/service
					free = dep
					arr = append(arr, time.Duration(dep*1e9))
					rtts = append(rtts, time.Duration((dep-0.54)*1e9)+50*time.Microsecond)
				}
			}
			dep := max(tx, free) + 1/service
			free = dep
			rx := dep
			if late && int(tx*10)%3 == 1 && int(tx*1000)%100 < 30 {
				rx += 0.030 - float64(int(tx*1000)%100)/1000 // the reflector catches up at the end of 30 ms
			}
			arr = append(arr, time.Duration(rx*1e9))
			rtts = append(rtts, time.Duration((rx-tx)*1e9)+50*time.Microsecond)
		}
		// arrival order
		idx := make([]int, len(arr))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return int(arr[a] - arr[b]) })
		r2, a2 := make([]time.Duration, len(idx)), make([]time.Duration, len(idx))
		for k, i := range idx {
			r2[k], a2[k] = rtts[i], arr[i]-arr[idx[0]]
		}
		return r2, a2
	}
	for _, c := range []struct {
		name                   string
		offered, service, want float64
		stall, late            bool
	}{
		{"kept pace", 4000, 5000, 0, false, false},
		{"our stall, then a burst", 4950, 5000, 5000, true, false},
		{"our stall and a late reflector", 4950, 5000, 5000, true, true},
		{"slower far end", 4950, 4800, 4800, false, false},
		{"slower far end, late reflector", 4950, 4800, 4800, false, true},
	} {
		rtts, arr := trace(c.offered, c.service, c.stall, c.late)
		got := servicePPS(rtts, arr, 1)
		t.Logf("%s: %.1f/s", c.name, got)
		if (c.want == 0 && got != 0) || (c.want > 0 && math.Abs(got/c.want-1) > 0.002) {
			t.Errorf("%s: %.1f/s, want %.0f/s", c.name, got, c.want)
		}
		// A reflect run keeps a thinned sample of a long run: every 4th
		// datagram here gives the same rate.
		s := stats.NewThinned(len(rtts)/4 + 2)
		for i := range rtts {
			s.Add(rtts[i], arr[i])
		}
		thin := servicePPS(s.Values(), s.Times(), s.Step())
		if s.Step() != 4 || (c.want == 0 && thin != 0) || (c.want > 0 && math.Abs(thin/c.want-1) > 0.01) {
			t.Errorf("%s, every %dth datagram: %.1f/s, want %.0f/s", c.name, s.Step(), thin, c.want)
		}
	}
}
