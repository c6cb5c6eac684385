//go:build linux

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/netlab"
)

// TestLatencyUnderLoadLab runs `client --latency --json` from lab host A
// to a wirebench server in B across A→B shaped as 10 Mbit/s Ethernet with
// tbf latency 20 ms, with a load above the link rate.
//
// The physics behind the threshold: tbf's queue holds what the wire sends
// in its latency setting, 20 ms. A load above the link rate keeps that
// queue (nearly) full, and the probe's requests wait in it behind the load
// (the replies come back B→A, unshaped). So the loaded median is the idle
// median plus up to 20 ms of queueing. The test asserts at least half of
// that, 10 ms: a UDP load at twice the link rate holds the queue full all
// the time. An idle link has no queue, so its median is well under 1 ms.
//
// The load is UDP because a TCP sender on the same host as the shaper does
// not fill it: TCP Small Queues lets a socket keep only about 1 ms of its
// pacing rate in its own host's qdisc (measured here: loaded p50 1.6 ms,
// p99 22 ms). A TCP load fills the queue of a bottleneck in a router, which
// this two-namespace lab does not have.
func TestLatencyUnderLoadLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to build network namespaces")
	}
	if err := netlab.Available(); err != nil {
		t.Skipf("no lab: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lab, err := netlab.New(ctx, netlab.Config{Name: "latload", RateBPS: 10e6, Latency: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("creating lab: %v", err)
	}
	defer func() {
		if err := lab.Close(); err != nil {
			t.Errorf("closing lab: %v", err)
		}
	}()
	const thresholdMS = 10.0
	host := lab.B.Addr.String()

	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	var srvErr bytes.Buffer
	go func() {
		defer close(served)
		_ = lab.B.Do(func() error {
			run(sctx, []string{"server", "-B", host, "-p", "5001"}, &bytes.Buffer{}, &srvErr)
			return nil
		})
	}()
	defer func() { stop(); <-served; t.Logf("server stderr: %s", srvErr.String()) }()
	waitEcho(t, lab.A, host+":5001")

	tests := []struct {
		name string
		load []string
	}{
		{"udp probe", []string{"--latency", "-u", "-b", "20M"}},
		{"icmp probe", []string{"--latency=icmp", "-u", "-b", "20M"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"client", host, "-p", "5001", "-t", "3", "--json"}, tt.load...)
			var out, errb bytes.Buffer
			code := -1
			if err := lab.A.Do(func() error { code = run(ctx, args, &out, &errb); return nil }); err != nil {
				t.Fatal(err)
			}
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var doc struct {
				Schema, Kind string
				Idle, Loaded echo.Stats
				Throughput   struct {
					Schema string
					Sender struct {
						BitsPerSecond float64 `json:"bits_per_second"`
					}
				}
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("decoding %s: %v", out.String(), err)
			}
			if doc.Schema != echo.Schema || doc.Kind != "under-load" || doc.Throughput.Schema == "" {
				t.Errorf("schema %q kind %q throughput schema %q", doc.Schema, doc.Kind, doc.Throughput.Schema)
			}
			for name, st := range map[string]echo.Stats{"idle": doc.Idle, "loaded": doc.Loaded} {
				var inBins int64
				for _, b := range st.RTT.Bins {
					inBins += b.Count
				}
				if st.RTT.Count < 20 || inBins != st.RTT.Count {
					t.Errorf("%s distribution: %d samples, %d in bins", name, st.RTT.Count, inBins)
				}
			}
			idle, loaded := doc.Idle.RTT, doc.Loaded.RTT
			t.Logf("idle p50 %.3f p99 %.3f ms (%d); loaded p50 %.3f p99 %.3f ms (%d, loss %.1f %%); load sent %.2f Mbit/s",
				idle.P50, idle.P99, idle.Count, loaded.P50, loaded.P99, loaded.Count, doc.Loaded.LossPct, doc.Throughput.Sender.BitsPerSecond/1e6)
			if loaded.P50 <= idle.P50+thresholdMS {
				t.Errorf("loaded p50 %.3f ms is not %v ms above idle p50 %.3f ms: the tbf queue did not show", loaded.P50, thresholdMS, idle.P50)
			}
		})
	}
}

// waitEcho waits (up to 5 s) until host's echo service answers from h.
func waitEcho(t *testing.T, h *netlab.Host, addr string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var err error
		_ = h.Do(func() error {
			var c net.Conn
			c, err = net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				_, _ = c.Write(echo.Append(nil, echo.Message{Kind: echo.KindBye}))
				c.Close()
			}
			return nil
		})
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("server in B not reachable: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
