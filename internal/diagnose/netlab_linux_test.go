//go:build netlab && linux

package diagnose

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/sweep"
	"github.com/wirebench/wirebench/internal/testutil/labhost"
)

// TestLabEth100MediumIsTheLimit is issue 37's: over the lab's exact wire
// at 100 Mbit/s Ethernet (the departure-time forwarder in the router) to
// our server in B, with no model, the verdict is that the medium is the
// limit. With the netlab build tag only (namespaces, and a machine
// quiet enough for the wire to hold its rate).
func TestLabEth100MediumIsTheLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := labhost.New(t, ctx, netlab.Config{Name: "diag", RateBPS: 100e6, Wire: netlab.WireExact}, "a lab diagnosis takes several seconds")
	var srv *session.Server
	if err := l.B.Do(func() (err error) {
		srv, err = iperf2.Listen(ctx, session.ServerConfig{Bind: l.B.Addr.String(), Port: -1})
		return err
	}); err != nil {
		t.Fatalf("starting our server in B: %v", err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(sctx) }()
	t.Cleanup(func() { stop(); <-served })

	runner := sweep.SessionRunner{Base: session.ClientConfig{Host: l.B.Addr.String(), Port: srv.Port(), Dialect: session.DialectIperf2}}
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
		Budget: 2 * time.Minute, Overhead: 2 * time.Second, OnRun: func(p Progress) { t.Log(p.Line()) }}
	doc := NewResult(result.DiagnosisTest{Mode: sweep.ModeWirebench, Medium: m.Name})
	if err := Run(ctx, cfg, inA, doc); err != nil {
		t.Fatal(err)
	}
	t.Log(doc.Verdict)
	f0 := finding(t, doc, result.FindingMedium)
	if p := f0.Figures["percent_of_line"]; p < 98 {
		t.Errorf("%.1f %% of the line, want at least 98", p)
	}
}
