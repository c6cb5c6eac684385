//go:build netlab && linux

package diagnose

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/testutil/labhost"
)

// TestLabEth100MediumIsTheLimit is issue 37's: over a lab wire shaped as
// 100 Mbit/s Ethernet (on a router between the hosts) to a reflector with
// no model, the verdict is that the medium is the limit. With the netlab
// build tag only: the wire's rate holds to 2 % on a quiet machine.
func TestLabEth100MediumIsTheLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := labhost.New(t, ctx, netlab.Config{Name: "diag", RateBPS: 100e6, Burst: 62500, Router: true}, "a lab diagnosis takes several seconds")
	var f *lab.Reflector
	if err := l.B.Do(func() (err error) {
		f, err = lab.NewReflector(ctx, l.B.Addr.String()+":0", model.Spec{}, "")
		return err
	}); err != nil {
		t.Fatalf("starting the reflector in B: %v", err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _, _ = f.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })

	runner := sweep.ReflectRunner{Host: l.B.Addr.String(), Port: int(f.Addr().Port())}
	inA := sweep.RunnerFunc(func(ctx context.Context, s sweep.Spec) (o result.SweepOutcome, err error) {
		err = l.A.Do(func() (err error) {
			o, err = runner.Trial(ctx, s)
			return err
		})
		return o, err
	})
	m, err := linerate.LookupMedium("eth100")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Sizes: []int{512, 1024, 1470}, Medium: m, MaxPPS: 20000, Trial: time.Second, Gap: 200 * time.Millisecond,
		Budget: 2 * time.Minute, Overhead: time.Second, OnRun: func(p Progress) { t.Log(p.Line()) }}
	doc := NewResult(result.DiagnosisTest{Mode: sweep.ModeReflect, Medium: m.Name})
	if err := Run(ctx, cfg, inA, doc); err != nil {
		t.Fatal(err)
	}
	t.Log(doc.Verdict)
	f0 := finding(t, doc, result.FindingMedium)
	if p := f0.Figures["percent_of_line"]; p < 98 {
		t.Errorf("%.1f %% of the line, want at least 98", p)
	}
}
