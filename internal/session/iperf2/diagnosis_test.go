package iperf2

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// startDiagServer runs a loopback server and returns its port and a channel
// of finished results.
func startDiagServer(t *testing.T) (int, <-chan *result.Result) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan *result.Result, 8)
	srv, err := Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, IdleTimeout: time.Second,
		OnResult: func(_ int, r *result.Result) { results <- r }})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Port(), results
}

func waitResult(t *testing.T, results <-chan *result.Result) *result.Result {
	t.Helper()
	select {
	case r := <-results:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no result from the server within 10 s")
		return nil
	}
}

// TestDiagnosisTimerBound feeds a test the arrivals of seed 000's case —
// 7 datagrams back to back every 1 ms, 7000 frames/s — with the arrival
// times given (a device's timer is exact; a test sender sleeping on a busy
// two-core machine is not), and expects the server-side accounting to say
// the path looks timer-bound. The detector itself is tested in tickdiag.
func TestDiagnosisTimerBound(t *testing.T) {
	h := iperf2.NewClientHeader(true, 1, 5001)
	tmpl := (&udpStream{layout: iperf2.LayoutModern, header: h.AppendUDPTo(nil), length: 1470}).template()
	base := time.Unix(1_700_000_000, 0)
	peer := netip.MustParseAddrPort("127.0.0.1:40000")
	var rx *udpRecv
	id := int64(1)
	for burst := 0; burst < 1500; burst++ {
		for k := 0; k < 7; k++ {
			at := base.Add(time.Duration(burst)*time.Millisecond + time.Duration(k)*12*time.Microsecond)
			iperf2.PutDatagram(tmpl, iperf2.LayoutModern, id, at.Add(-50*time.Microsecond))
			if rx == nil {
				rx = newUDPRecv(peer, tmpl, at)
			}
			rx.feed(tmpl, at)
			id++
		}
	}
	if rx.rx.Seq.Received() != id-1 {
		t.Fatalf("received %d, want %d", rx.rx.Seq.Received(), id-1)
	}
	d := rx.diagnose()
	if !strings.Contains(d, "timer") || !strings.Contains(d, "1 ms") {
		t.Fatalf("no 1 ms timer diagnosis for bursts of 7 every 1 ms: %q", d)
	}
	// The same frame rate, evenly spaced, is quiet.
	smooth := newUDPRecv(peer, tmpl, base)
	for i := int64(1); i <= 10500; i++ {
		at := base.Add(time.Duration(i) * time.Second / 7000)
		iperf2.PutDatagram(tmpl, iperf2.LayoutModern, i, at)
		smooth.feed(tmpl, at)
	}
	if d := smooth.diagnose(); d != "" {
		t.Fatalf("diagnosis on an evenly spaced 7000 frames/s: %q", d)
	}
}

// TestDiagnosisQuietOnSmoothStream paces 7000 datagrams/s evenly and
// expects no diagnosis.
func TestDiagnosisQuietOnSmoothStream(t *testing.T) {
	port, results := startDiagServer(t)
	cr, err := runClient(context.Background(), session.ClientConfig{Host: "127.0.0.1", Port: port, UDP: true,
		Rate: units.Rate{Value: 7000, PPS: true}, Duration: 1500 * time.Millisecond, Length: 1470})
	if err != nil {
		t.Fatal(err)
	}
	r := waitResult(t, results)
	if len(r.Diagnoses) != 0 {
		t.Fatalf("diagnosis on a smooth stream (client sent %d): %q", cr.Sender.Packets, r.Diagnoses)
	}
}
