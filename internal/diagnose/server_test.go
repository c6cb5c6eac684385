package diagnose

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
)

// startRelayedServer runs our server on loopback behind a relay with the
// model text (UDP and TCP), until the test ends, and returns the relay's
// port.
func startRelayedServer(t *testing.T, text string) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := iperf2.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ctx) }()
	spec, err := model.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	r, err := lab.NewRelay(ctx, lab.RelayConfig{Listen: "127.0.0.1:0", To: fmt.Sprintf("127.0.0.1:%d", srv.Port()), Model: spec, ModelText: text, TCP: true})
	if err != nil {
		t.Fatal(err)
	}
	relayed := make(chan struct{})
	go func() { defer close(relayed); _, _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-relayed; <-served })
	return int(r.Addr().Port())
}

// TestServerModeByteRateAndTCP diagnoses our server behind a 20 Mbit/s
// relay (--mode wirebench): the receive counts come from the server's
// reports; an upload and a download run, and a TCP run, follow the UDP
// runs. The relay shapes what we send, not what the server sends back, so
// the upload is the slower direction.
func TestServerModeByteRateAndTCP(t *testing.T) {
	if testing.Short() {
		t.Skip("a diagnosis over loopback takes tens of seconds; skipped with -short")
	}
	port := startRelayedServer(t, "rate=20mbit")
	o := Options{Port: port, Mode: "wirebench", Medium: "eth1g", Sizes: "512,1024,1470", MaxRate: DefaultMaxRate,
		Trial: "1s", LowRate: "0", Budget: DefaultBudget, BigSize: 0}
	doc := diagnoseWith(t, o)
	f := finding(t, doc, result.FindingByteRate)
	if v := f.Figures["line_bits_per_second"]; v < 19.6e6 || v > 20.4e6 {
		t.Errorf("line rate %v, want 20 Mbit/s within 2 %%", v)
	}
	dir := finding(t, doc, result.FindingDirection)
	up, down := dir.Figures["upload_bits_per_second"], dir.Figures["download_bits_per_second"]
	// 20 Mbit/s on eth1g's framing carries 19.14 Mbit/s of 1470 B payload.
	if up < 19.14e6*0.97 || up > 19.14e6*1.03 || down < 1.5*up || !strings.Contains(dir.Text, "upload is the slower") {
		t.Errorf("direction %+v: want an upload of 19.1 Mbit/s within 3 %% and a download over 1.5 times it", dir)
	}
	last := doc.Runs[len(doc.Runs)-1]
	if last.Purpose != result.DiagnoseTCP || last.BitsPerSecond <= 0 {
		t.Errorf("last run %+v, want a TCP run with its goodput", last)
	}
	t.Logf("TCP through the relay: %.2f Mbit/s", last.BitsPerSecond/1e6)
}
