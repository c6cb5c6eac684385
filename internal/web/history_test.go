package web

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

func udpResult(peer string, bytes int64, lost int64) *result.Result {
	r := result.New("server")
	r.Test = result.Test{Protocol: result.UDP, Direction: result.DirReceive, Dialect: "iperf2", Peer: peer}
	r.Receiver = &result.Receiver{Bytes: bytes, BitsPerSecond: 8e6, Packets: 1000 - lost, Lost: lost, Total: 1000, JitterMS: 0.25, Source: "local"}
	return r
}

func TestMemoryFilterAndOrder(t *testing.T) {
	m := NewMemory(0, 0)
	ctx := context.Background()
	for i, peer := range []string{"192.0.2.1:5000", "192.0.2.2:5000", "192.0.2.1:6000"} {
		id, err := m.Add(udpResult(peer, int64(i+1)*1000, 0), map[string]string{"lab": "a"})
		if err != nil || id != int64(i+1) {
			t.Fatalf("Add %d: id %d, %v", i, id, err)
		}
	}
	runs, err := m.List(ctx, Filter{Labels: map[string]string{"peer": "192.0.2.1", "lab": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != 1 || runs[1].ID != 3 {
		t.Fatalf("peer=192.0.2.1: %+v, want runs 1 and 3, oldest first", runs)
	}
	if runs, _ = m.List(ctx, Filter{Limit: 1}); len(runs) != 1 || runs[0].ID != 3 {
		t.Fatalf("limit 1: %+v, want the newest (3)", runs)
	}
	if runs, _ = m.List(ctx, Filter{Labels: map[string]string{"lab": "b"}}); len(runs) != 0 {
		t.Fatalf("lab=b: %+v, want none", runs)
	}
	run, err := m.Get(ctx, 2)
	if err != nil || !strings.Contains(string(run.Result), `"peer":"192.0.2.2:5000"`) {
		t.Fatalf("Get 2: %v %s", err, run.Result)
	}
	if _, err := m.Get(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get 99: %v, want ErrNotFound", err)
	}
}

func TestMemoryBounds(t *testing.T) {
	m := NewMemory(3, 0)
	for i := 0; i < 5; i++ {
		m.Add(udpResult("192.0.2.1:1", 1, 0), nil)
	}
	runs, _ := m.List(context.Background(), Filter{})
	if len(runs) != 3 || runs[0].ID != 3 || m.Forgotten() != 2 {
		t.Fatalf("runs %+v, forgotten %d: want runs 3-5 and 2 forgotten", runs, m.Forgotten())
	}
	// A byte bound keeps the newest run even when it alone is larger.
	m = NewMemory(100, 10)
	m.Add(udpResult("192.0.2.1:1", 1, 0), nil)
	m.Add(udpResult("192.0.2.1:1", 2, 0), nil)
	if runs, _ := m.List(context.Background(), Filter{}); len(runs) != 1 || runs[0].ID != 2 {
		t.Fatalf("byte bound: %+v, want run 2 only", runs)
	}
}

func TestSummarize(t *testing.T) {
	r := udpResult("192.0.2.1:1", 1, 3)
	r.Link = &result.Link{Medium: "eth100", TheoreticalBPS: 95.7e6, PercentOfTheoretical: 8.36}
	r.Warn("jitter measured with GRO")
	got := Summarize(r)
	want := "udp receive 8.00 Mbit/s, 0.30 % loss (3/1000), jitter 0.250 ms, 8.4 % of eth100; 1 warning"
	if got != want {
		t.Fatalf("Summarize = %q\nwant        %q", got, want)
	}
	r.Error = "peer went away"
	if got := Summarize(r); !strings.HasSuffix(got, "; error: peer went away") {
		t.Fatalf("with an error: %q", got)
	}
}
