package diagnose

import (
	"context"
	"fmt"
	"os"
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
	return diagnoseWith(t, o)
}

// diagnoseWith runs a diagnosis with options o against 127.0.0.1 (three
// minutes at most) and logs its runs, verdict, findings and what it
// could not tell.
func diagnoseWith(t *testing.T, o Options) *result.Diagnosis {
	t.Helper()
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

// figure is the figure name of the first finding of kind, and whether
// there is one.
func figure(d *result.Diagnosis, kind, name string) (float64, bool) {
	for _, f := range d.Findings {
		if f.Kind == kind {
			return f.Figures[name], true
		}
	}
	return 0, false
}

// finding is the first finding of kind; the test fails without one.
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

// bound checks figure name of the finding kind lies in [lo, hi].
func bound(d *result.Diagnosis, kind, name string, lo, hi float64) []string {
	v, ok := figure(d, kind, name)
	switch {
	case !ok:
		return []string{fmt.Sprintf("no %s finding", kind)}
	case v < lo || v > hi:
		return []string{fmt.Sprintf("%s %s = %v, want %v to %v", kind, name, v, lo, hi)}
	}
	return nil
}

// none checks there is no finding of kind.
func none(d *result.Diagnosis, kind string) []string {
	if _, ok := figure(d, kind, ""); ok {
		return []string{"unexpected " + kind + " finding"}
	}
	return nil
}

// attempts runs check up to n times until it finds nothing wrong. The
// reflector runs in this process on the same two cores: when the machine
// starves it, it holds a queue as a slow device would. Every attempt is
// logged and held to the same bounds; a far end on its own host does not
// stall.
func attempts(t *testing.T, n int, check func() []string) {
	t.Helper()
	var bad []string
	for i := 1; i <= n; i++ {
		if bad = check(); len(bad) == 0 {
			return
		}
		b, _ := os.ReadFile("/proc/loadavg")
		t.Logf("attempt %d of %d missed (load %s): %s", i, n, strings.TrimSpace(string(b)), strings.Join(bad, "; "))
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// noLowRate leaves out the loss floor's run, for the tests of other findings.
func noLowRate(o *Options) { o.LowRate = "0" }

func TestLabByteRate(t *testing.T) {
	attempts(t, 2, func() []string {
		return bound(diagnoseModel(t, "rate=20mbit", noLowRate), result.FindingByteRate, "line_bits_per_second", 19.6e6, 20.4e6)
	})
}

func TestLabFrameRate(t *testing.T) {
	attempts(t, 2, func() []string {
		d := diagnoseModel(t, "service=7000", noLowRate)
		return append(bound(d, result.FindingFrameRate, "frames_per_second", 6860, 7140), none(d, result.FindingByteRate)...)
	})
}

func TestLabTick(t *testing.T) {
	attempts(t, 2, func() []string {
		d := diagnoseModel(t, "tick=1ms/7", noLowRate)
		bad := append(bound(d, result.FindingTick, "period_ms", 1, 1), bound(d, result.FindingTick, "frames_per_tick", 7, 7)...)
		if !strings.Contains(d.Verdict, "(7 per 1 ms tick)") {
			bad = append(bad, fmt.Sprintf("verdict %q does not name the tick", d.Verdict))
		}
		return bad
	})
}

func TestLabSizeCliff(t *testing.T) {
	attempts(t, 2, func() []string {
		d := diagnoseModel(t, "service=5000,buffer=2524", noLowRate)
		bad := bound(d, result.FindingSizeCliff, "last_good_size", 1262, 1262)
		bad = append(bad, bound(d, result.FindingSizeCliff, "first_bad_size", 1263, 1263)...)
		return append(bad, bound(d, result.FindingSizeCliff, "buffer_bytes", 2524, 2524)...)
	})
}

func TestLabSizeLimit(t *testing.T) {
	attempts(t, 2, func() []string {
		return bound(diagnoseModel(t, "max=3000", noLowRate), result.FindingSizeLimit, "max_size", 3000, 3000)
	})
}

func TestLabLossFloor(t *testing.T) {
	attempts(t, 2, func() []string {
		d := diagnoseModel(t, "loss=1%,seed=7", nil)
		bad := bound(d, result.FindingLossFloor, "loss_percent", 0.7, 1.3)
		return append(append(bad, none(d, result.FindingFrameRate)...), none(d, result.FindingByteRate)...)
	})
}

func TestLabQueue(t *testing.T) {
	attempts(t, 2, func() []string {
		return bound(diagnoseModel(t, "rate=10mbit,queue=100ms", noLowRate), result.FindingQueue, "queue_ms", 90, 115)
	})
}

// TestLabQueueLongerThanLoadRuns: load runs of 250 ms at 1.5 × the limit
// fill at most 125 ms of a 200 ms queue (they gave 104 ms before the queue
// run); the queue run, twice the limit until its round trip settles with
// drops, gives the whole queue.
func TestLabQueueLongerThanLoadRuns(t *testing.T) {
	attempts(t, 2, func() []string {
		d := diagnoseModel(t, "rate=10mbit,queue=200ms", func(o *Options) { o.Trial, o.LowRate, o.BigSize = "250ms", "0", 0 })
		bad := bound(d, result.FindingQueue, "queue_ms", 160, 240)
		if f, ok := findingOf(d, result.FindingQueue); ok && f.Confidence != result.ConfidenceHigh {
			bad = append(bad, fmt.Sprintf("queue confidence %s, want high (a full queue)", f.Confidence))
		}
		return bad
	})
}

// findingOf is the first finding of kind, and whether there is one.
func findingOf(d *result.Diagnosis, kind string) (result.DiagnosisFinding, bool) {
	for _, f := range d.Findings {
		if f.Kind == kind {
			return f, true
		}
	}
	return result.DiagnosisFinding{}, false
}

// TestLabFrameAndByteRate: 50 Mbit/s over 9000 frames/s is 694 line
// bytes: the model hands over at 628 B of payload.
func TestLabFrameAndByteRate(t *testing.T) {
	attempts(t, 2, func() []string {
		d := diagnoseModel(t, "rate=50mbit,service=9000", func(o *Options) { o.Sizes, o.LowRate = "128,256,512,1024,1470", "0" })
		bad := bound(d, result.FindingFrameRate, "frames_per_second", 8820, 9180)
		bad = append(bad, bound(d, result.FindingByteRate, "line_bits_per_second", 49e6, 51e6)...)
		return append(bad, bound(d, result.FindingFrameRate, "handover_size", 597, 659)...)
	})
}
