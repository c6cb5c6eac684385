//go:build linux && netlab

// The lab's figure as a user reads it: a rate assertion, so it is a
// lab-tier test behind the netlab build tag, like netlab's own shaping
// tests:
//
//	go test -tags netlab -run TestLabEth100UDPGoodput -v ./internal/cli/

package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
)

// TestLabEth100UDPGoodput: in `lab up --medium eth100`, `wirebench client
// -u -l 1470 --medium eth100` offered more than the wire carries reads the
// wire's 95.70 Mbit/s (100 × 1470/1536) from the server's report, within
// 0.5 %.
func TestLabEth100UDPGoodput(t *testing.T) {
	const name = "t_eth100"
	needLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runLab(t, "lab", "up", "--name", name, "--medium", "eth100")
	srvDone := startInLab(ctx, t, name, "b", []string{"server"}, "listening")
	out, _ := runLab(t, append([]string{"lab", "exec", "--name", name, "a", "--"},
		wirebenchArgv("client", "198.18.0.2", "-u", "-b", "110M", "-l", "1470", "-t", "4", "--medium", "eth100", "--json")...)...)
	runLab(t, "lab", "down", "--name", name)
	<-srvDone
	var r result.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("client JSON: %v\n%s", err, out)
	}
	if r.Receiver == nil || r.Link == nil {
		t.Fatalf("no receiver or link figures: %s", out)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	want := netlab.WireGoodput(100e6, 1470, 28)
	got := r.Receiver.BitsPerSecond
	t.Logf("load %s; receiver %.3f Mbit/s over %.3f s (%d datagrams, %d lost), %.2f %% of the %.3f Mbit/s eth100 allows; warnings %q",
		strings.TrimSpace(string(load)), got/1e6, r.Receiver.Seconds, r.Receiver.Packets, r.Receiver.Lost,
		r.Link.PercentOfTheoretical, r.Link.TheoreticalBPS/1e6, r.Warnings)
	if math.Abs(r.Link.TheoreticalBPS-want) > 1 {
		t.Errorf("--medium eth100 theory %.0f bit/s, the lab's wire %.0f", r.Link.TheoreticalBPS, want)
	}
	if math.Abs(got-want)/want > 0.005 {
		t.Fatalf("receiver goodput %.3f Mbit/s is not within 0.5 %% of %.3f (a warning that the sender fell behind means "+
			"this machine starved it: the link went idle; run on a quieter machine)", got/1e6, want/1e6)
	}
}
