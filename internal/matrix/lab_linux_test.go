//go:build linux

package matrix_test

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/testutil/labhost"
	"github.com/wirebench/wirebench/internal/units"
)

// TestLabMatrix100M is issue 12's "matrix against a wirebench server over
// the 100 Mbit/s lab link: four cells within 1 % of theory (UDP 1470 B
// 95.70 Mbit/s, TCP 94.15 Mbit/s)". The lab shapes both directions as
// 100 Mbit/s Ethernet (tbf with the Ethernet size table, one frame per
// skb); our server runs in B, the matrix in A. Each cell lasts 3 s.
//
// The emulated wire itself runs short now and then on a loaded two-core
// VM (tbf dequeues on a timer; see internal/session/lab_test.go), so the
// matrix runs up to five times (as internal/session's lab tests retry), a
// second apart, until each cell has come within 1 % once; every try's
// cells are logged and face the same assertion, so a cell the tool
// measures wrongly fails all five.
//
// The lab keeps netlab's default bucket (12,500 bytes at 100 Mbit/s): a
// full bucket lets its bytes through at once when a cell starts, which over
// a 3 s cell lifts the figure by up to 0.033 %. A 62,500-byte bucket lifted
// TCP upload to 100.17 % of the wire, which the matrix rightly marks
// suspect (more than 0.1 % above what the medium carries).
func TestLabMatrix100M(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lab := labhost.New(t, ctx, netlab.Config{Name: "matrix", RateBPS: 100e6, ShapeBothWays: true, Router: true}, "the lab matrix takes about 15 s per try")
	var srv *session.Server
	if err := lab.B.Do(func() (err error) {
		// A (198.18.0.1) is not on B's link behind the router: allow the
		// server's UDP reverse traffic to go there. The server's TCP sends
		// with cubic, as the client's (-C cubic) does: bbr's probing cycles
		// run a few per cent below the wire rate over 3 s.
		srv, err = iperf2.Listen(ctx, session.ServerConfig{Bind: lab.B.Addr.String(), Port: -1,
			AllowReverse: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")},
			Socket:       sockopt.Options{Congestion: "cubic"}})
		return err
	}); err != nil {
		t.Fatalf("starting our server in %s: %v", lab.B.Name, err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("server: %v", err)
		}
	})

	eth100, err := linerate.LookupMedium("eth100")
	if err != nil {
		t.Fatal(err)
	}
	theory := map[string]float64{}
	for proto, st := range map[string]linerate.Stack{
		result.UDP: {Transport: linerate.UDP},
		result.TCP: {Transport: linerate.TCP, TCPTimestamps: true},
	} {
		payload := 1470
		if proto == result.TCP {
			payload = st.MSS()
		}
		b, err := linerate.Analyze(eth100, st, payload)
		if err != nil {
			t.Fatal(err)
		}
		theory[proto] = b.GoodputBPS
	}
	if math.Abs(theory[result.UDP]-95.70e6) > 0.01e6 || math.Abs(theory[result.TCP]-94.15e6) > 0.01e6 {
		t.Fatalf("theory UDP %.3f, TCP %.3f Mbit/s; want 95.70 and 94.15", theory[result.UDP]/1e6, theory[result.TCP]/1e6)
	}
	cfg := matrix.Config{
		Base: session.ClientConfig{Host: lab.B.Addr.String(), Port: srv.Port(), Duration: 3 * time.Second,
			Interval: time.Second, Rate: units.Rate{Value: 120e6}, Length: 1470, Congestion: "cubic"},
		Place: func(r *result.Result, bps float64) (float64, bool) { return 100 * bps / theory[r.Test.Protocol], true },
		Pause: matrix.DefaultPause,
	}
	// Each cell must come within 1 % on one of the tries; a try that
	// misses is the wire running short (its UDP loss then exceeds the
	// 20 % the 120 Mbit/s offer loses on a full-rate wire), logged as such.
	missed := map[string]string{}
	for _, c := range matrix.Plan(cfg) {
		missed[c.Name()] = "never ran"
	}
	for try := 1; try <= 5 && len(missed) > 0; try++ {
		if try > 1 {
			time.Sleep(time.Second)
		}
		var m *result.Matrix
		err := lab.A.Do(func() (err error) {
			m, err = matrix.Run(ctx, matrix.ClientSessions{}, cfg)
			return err
		})
		if err != nil {
			t.Fatalf("running the matrix in %s: %v", lab.A.Name, err)
		}
		for name, miss := range checkLabCells(t, try, m, theory) {
			if _, open := missed[name]; open {
				if miss == "" {
					delete(missed, name)
				} else {
					missed[name] = miss
				}
			}
		}
	}
	for name, miss := range missed {
		t.Errorf("%s: no try within 1 %% of theory; the last: %s", name, miss)
	}
}

// checkLabCells logs a try's cells and returns, per cell, why it is not
// ok and within 1 % of theory ("" when it is).
func checkLabCells(t *testing.T, try int, m *result.Matrix, theory map[string]float64) map[string]string {
	t.Helper()
	if len(m.Cells) != 4 {
		t.Fatalf("%d cells, want 4", len(m.Cells))
	}
	out := map[string]string{}
	for _, c := range m.Cells {
		if c.Status != matrix.StatusOK || c.BitsPerSecond == nil || c.PercentOfLine == nil || c.Basis != "receiver" {
			out[c.Name()] = fmt.Sprintf("%s %s (basis %q)", c.Status, c.Reason, c.Basis)
			if c.Result != nil {
				t.Logf("try %d: %s warnings: %q", try, c.Name(), c.Result.Warnings)
			}
			continue
		}
		want := theory[c.Protocol]
		t.Logf("try %d: %s %.3f Mbit/s = %.2f %% of %.2f; loss %s", try, c.Name(), *c.BitsPerSecond/1e6,
			*c.PercentOfLine, want/1e6, fmtOpt(c.LossPercent))
		out[c.Name()] = ""
		if math.Abs(*c.BitsPerSecond-want) > 0.01*want {
			out[c.Name()] = fmt.Sprintf("%.3f Mbit/s is not within 1 %% of %.2f", *c.BitsPerSecond/1e6, want/1e6)
		}
	}
	return out
}
