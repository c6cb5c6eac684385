package iperf2

import (
	"context"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// TestUDPTransitSummary: a wirebench UDP client against a wirebench server
// on loopback gets the server's one-way transit summary in its result
// (receiver.transit_us, from the report's wirebench extension), covering
// every datagram the server received, FIN included, with ordered
// percentiles; and the server's own result carries the same summary.
// Both ends read this host's clock, so no transit is negative. Nothing
// here depends on how long a transit took.
func TestUDPTransitSummary(t *testing.T) {
	ts := startServer(t, session.ServerConfig{})
	cr, err := runClient(context.Background(), session.ClientConfig{Host: "127.0.0.1", Port: ts.srv.Port(), UDP: true,
		Rate: units.Rate{Value: 2000, PPS: true}, Duration: 300 * time.Millisecond, Length: 1470})
	if err != nil {
		t.Fatal(err)
	}
	rc := receiverOf(t, cr)
	if rc.Transit == nil {
		t.Fatalf("no transit summary from a wirebench server: %+v", rc)
	}
	checkTransit(t, "client's copy", rc.Transit, rc.Packets)
	srv := receiverOf(t, ts.waitResults(1)[0])
	if srv.Transit == nil {
		t.Fatalf("server result has no transit summary: %+v", srv)
	}
	checkTransit(t, "server's own", srv.Transit, srv.Packets)
	if *srv.Transit != *rc.Transit {
		t.Errorf("server result %+v, report %+v: the report carries a different summary", *srv.Transit, *rc.Transit)
	}
}

// checkTransit checks a transit summary taken on one clock: count equals
// the datagrams received, no transit is negative, percentiles in order.
func checkTransit(t *testing.T, what string, tr *result.Transit, packets int64) {
	t.Helper()
	if tr.Count != packets || packets < 2 {
		t.Errorf("%s: count %d, received %d", what, tr.Count, packets)
	}
	if tr.Min < 0 || tr.P50 < 0 {
		t.Errorf("%s: negative transit on one clock: %+v", what, *tr)
	}
	if !(tr.Min <= tr.P50 && tr.P50 <= tr.P90 && tr.P90 <= tr.P99 && tr.P99 <= tr.P999 && tr.P999 <= tr.Max) {
		t.Errorf("%s: percentiles out of order: %+v", what, *tr)
	}
}
