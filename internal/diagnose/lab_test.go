package diagnose

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/result"
)

// startReflector runs an in-process reflector with the model text on a
// free loopback port until the test ends, and returns its port.
func startReflector(t *testing.T, text string) int {
	t.Helper()
	spec, err := model.Parse(text)
	if err != nil {
		t.Fatalf("model %q: %v", text, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f, err := lab.NewReflector(ctx, "127.0.0.1:0", spec, text)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := f.Run(ctx); err != nil {
			t.Errorf("reflector: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return int(f.Addr().Port())
}

// diagnoseModel diagnoses a reflector with the model text, with the
// command's defaults but the options given.
func diagnoseModel(t *testing.T, text string, edit func(o *Options)) *result.Diagnosis {
	t.Helper()
	if testing.Short() {
		t.Skip("a diagnosis over loopback takes tens of seconds; skipped with -short")
	}
	o := Options{Port: startReflector(t, text), Mode: "reflect", Medium: "eth1g", Sizes: DefaultSizes, MaxRate: DefaultMaxRate,
		Trial: DefaultTrial, LowRate: DefaultLowRate, Budget: DefaultBudget, BigSize: DefaultBigSize}
	if edit != nil {
		edit(&o)
	}
	s, err := o.Setup("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s.Config.OnRun = func(p Progress) { t.Log(p.Line()) }
	doc := NewResult(s.Test)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := Run(ctx, s.Config, s.Runner, doc); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (%.0f s, %d runs)", doc.Verdict, doc.Seconds, len(doc.Runs))
	for _, f := range doc.Findings {
		t.Logf("%s %s %v runs %v: %s", f.Kind, f.Confidence, f.Figures, f.EvidenceRuns, f.Text)
	}
	for _, c := range doc.CannotTell {
		t.Logf("cannot tell: %s", c)
	}
	return doc
}

func finding(t *testing.T, d *result.Diagnosis, kind string) result.DiagnosisFinding {
	t.Helper()
	for _, f := range d.Findings {
		if f.Kind == kind {
			return f
		}
	}
	t.Fatalf("no %s finding", kind)
	return result.DiagnosisFinding{}
}

// noLowRate leaves out the loss floor's run, for the tests of other findings.
func noLowRate(o *Options) { o.LowRate = "0" }

func TestLabByteRate(t *testing.T) {
	d := diagnoseModel(t, "rate=20mbit", noLowRate)
	f := finding(t, d, result.FindingByteRate)
	if v := f.Figures["line_bits_per_second"]; v < 19.6e6 || v > 20.4e6 {
		t.Errorf("line rate %v, want 20 Mbit/s within 2 %%", v)
	}
}

func TestLabFrameRate(t *testing.T) {
	d := diagnoseModel(t, "service=7000", noLowRate)
	f := finding(t, d, result.FindingFrameRate)
	if v := f.Figures["frames_per_second"]; v < 6860 || v > 7140 {
		t.Errorf("frame rate %v, want 7000/s within 2 %%", v)
	}
	noFinding(t, d, result.FindingByteRate)
}

func TestLabTick(t *testing.T) {
	d := diagnoseModel(t, "tick=1ms/7", noLowRate)
	f := finding(t, d, result.FindingTick)
	if f.Figures["period_ms"] != 1 || f.Figures["frames_per_tick"] != 7 {
		t.Errorf("tick %v, want 1 ms and 7 frames", f.Figures)
	}
	if !strings.Contains(d.Verdict, "(7 per 1 ms tick)") {
		t.Errorf("verdict %q does not name the tick", d.Verdict)
	}
}

func TestLabSizeCliff(t *testing.T) {
	d := diagnoseModel(t, "service=5000,buffer=2524", noLowRate)
	f := finding(t, d, result.FindingSizeCliff)
	if f.Figures["last_good_size"] != 1262 || f.Figures["first_bad_size"] != 1263 || f.Figures["buffer_bytes"] != 2524 {
		t.Errorf("cliff %v, want 1262/1263 and a buffer of 2524 bytes", f.Figures)
	}
}

func TestLabSizeLimit(t *testing.T) {
	d := diagnoseModel(t, "max=3000", noLowRate)
	if f := finding(t, d, result.FindingSizeLimit); f.Figures["max_size"] != 3000 {
		t.Errorf("size limit %v, want 3000 bytes", f.Figures)
	}
}

func TestLabLossFloor(t *testing.T) {
	d := diagnoseModel(t, "loss=1%,seed=7", nil)
	if v := finding(t, d, result.FindingLossFloor).Figures["loss_percent"]; v < 0.7 || v > 1.3 {
		t.Errorf("loss floor %v %%, want 1 %% ± 0.3", v)
	}
	noFinding(t, d, result.FindingFrameRate)
	noFinding(t, d, result.FindingByteRate)
}

func TestLabQueue(t *testing.T) {
	d := diagnoseModel(t, "rate=10mbit,queue=100ms", noLowRate)
	if v := finding(t, d, result.FindingQueue).Figures["queue_ms"]; v < 90 || v > 115 {
		t.Errorf("queue %v ms, want about 100", v)
	}
}

func TestLabFrameAndByteRate(t *testing.T) {
	d := diagnoseModel(t, "rate=50mbit,service=9000", func(o *Options) { o.Sizes, o.LowRate = "128,256,512,1024,1470", "0" })
	fr, by := finding(t, d, result.FindingFrameRate), finding(t, d, result.FindingByteRate)
	if v := fr.Figures["frames_per_second"]; v < 8820 || v > 9180 {
		t.Errorf("frame rate %v, want 9000/s within 2 %%", v)
	}
	if v := by.Figures["line_bits_per_second"]; v < 49e6 || v > 51e6 {
		t.Errorf("line rate %v, want 50 Mbit/s within 2 %%", v)
	}
	// 50 Mbit/s over 9000 frames/s is 694 line bytes: 628 B of payload.
	if v := fr.Figures["handover_size"]; v < 597 || v > 659 {
		t.Errorf("hand-over at %v B, want 628 within 5 %%", v)
	}
}

func noFinding(t *testing.T, d *result.Diagnosis, kind string) {
	t.Helper()
	for _, f := range d.Findings {
		if f.Kind == kind {
			t.Errorf("unexpected %s finding: %s", kind, f.Text)
		}
	}
}
