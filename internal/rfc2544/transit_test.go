package rfc2544

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
)

// transitDevice is a fakeDevice whose far end sends a transit summary
// instead of reflecting: its clock runs 5 s behind ours, so every transit
// is negative.
type transitDevice struct{ fakeDevice }

func (d *transitDevice) Trial(ctx context.Context, s sweep.Spec) (result.SweepOutcome, error) {
	o, err := d.fakeDevice.Trial(ctx, s)
	o.RTTs, o.RTTDist = nil, nil
	o.Transit = &result.Transit{Min: -5_000_000 + 200, P50: -5_000_000 + 300, P90: -5_000_000 + 500, P99: -5_000_000 + 900,
		P999: -5_000_000 + 1000, Max: -5_000_000 + 1200, Count: o.Received}
	return o, err
}

// TestDelayVariationOnly: with clocks not known to be shared, the latency
// points are delay variation: each trial's minimum subtracted (min 0, p50
// 0.1 ms above it for this far end), kind delay_variation, the note and the
// text table saying it is not latency, and no mean or histogram.
func TestDelayVariationOnly(t *testing.T) {
	d := &transitDevice{fakeDevice{capPPS: 812, queue: 4}}
	cfg := fakeConfig()
	cfg.Sizes, cfg.Tests, cfg.Latency = []int{1472}, []string{result.RFC2544TestLatency}, result.RFC2544DelayVariation
	res := NewResult(result.RFC2544Test{Mode: sweep.ModeWirebench, Clock: result.RFC2544ClockSeparate})
	if err := Run(context.Background(), cfg, d, res); err != nil {
		t.Fatal(err)
	}
	sr := res.Sizes[0]
	if len(sr.Latency) != 4 {
		t.Fatalf("latency %+v (%s)", sr.Latency, sr.LatencyNote)
	}
	for _, p := range sr.Latency {
		if p.Kind != result.RFC2544DelayVariation || p.MinMS != 0 || p.P50MS != 0.1 || p.P99MS != 0.7 || p.MaxMS != 1 || p.MeanMS != 0 || len(p.Histogram) != 0 || p.Timed == 0 {
			t.Errorf("%g %%: %+v, want delay variation 0 / 0.1 / 0.7 / 1 ms, no mean, no histogram", p.LoadPercent, p)
		}
	}
	if !strings.HasPrefix(sr.LatencyNote, "delay variation only") {
		t.Errorf("note %q", sr.LatencyNote)
	}
	var text bytes.Buffer
	if err := report.WriteRFC2544(&text, res, false); err != nil || !strings.Contains(text.String(), "Delay variation at load (NOT latency") {
		t.Errorf("text (%v):\n%s", err, text.String())
	}
	var csv bytes.Buffer
	if err := report.WriteRFC2544CSV(&csv, res); err != nil || !strings.Contains(csv.String(), "latency,1472,50,delay_variation_p50_ms,0.1") {
		t.Errorf("csv (%v):\n%s", err, csv.String())
	}
	b, _ := json.Marshal(res)
	for _, key := range []string{`"kind":"delay_variation"`, `"clock":"separate"`, `"timed":`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	if bytes.Contains(b, []byte(`"mean_ms"`)) {
		t.Error("JSON has a mean the summary does not give")
	}
	// The same summary taken as one-way on one clock is flagged: a
	// negative transit means the clocks differ after all.
	cfg.Latency = result.RFC2544OneWay
	res = NewResult(result.RFC2544Test{Mode: sweep.ModeWirebench, Clock: result.RFC2544ClockShared})
	if err := Run(context.Background(), cfg, d, res); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "do not read the same clock after all") {
		t.Errorf("negative one-way transit not flagged: %q", w)
	}
}
