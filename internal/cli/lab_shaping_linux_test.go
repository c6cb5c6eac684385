//go:build linux && netlab

// The lab's figures as a user reads them: rate and round-trip assertions,
// so they are lab-tier tests behind the netlab build tag, like netlab's own
// shaping tests:
//
//	go test -tags netlab -run 'TestLabEth100' -v ./internal/cli/
//
// Each figure faces two bounds. The medium's bound (no more than the wire
// carries, no round trip shorter than the wire allows) is physical: a lab
// wire that lets anything through faster than eth100 fails it, and load
// can only move a figure away from it, so it is checked on every try and
// never retried (a round trip under the wire's is checked on the filled
// wire, the default: tbf's bucket lets 12,500 bytes leave at once).
// The accuracy bound (within 0.3 % of the wire rate) fails where the machine starves the
// shaper or the sender for longer than the bucket's 1 ms of slack, and
// the wire delivers less than its rate (docs/lab-hosts.md); it is retried
// up to labTries times, each try logged with the load average.

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
)

const (
	// labAbove is how far above what the medium carries a figure may read
	// (+0.1 %: the measurement's own rounding); more means the wire cheated.
	labAbove = 0.001
	// labAccuracy is how far below the medium a rate may read.
	labAccuracy = 0.003
	// labTries bounds the tries of an accuracy bound.
	labTries = 3
)

// loadavg returns /proc/loadavg's first three fields, for the log.
func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// within tries measure up to labTries times until it returns a figure
// within the accuracy bound. measure checks the physical bound itself (and
// fails the test at once if it does not hold). Each try is logged.
func within(t *testing.T, what string, measure func(try int) (ok bool, line string)) {
	t.Helper()
	for try := 1; try <= labTries; try++ {
		ok, line := measure(try)
		t.Logf("%s, try %d/%d (load %s): %s", what, try, labTries, loadavg(), line)
		if t.Failed() || ok {
			return
		}
		time.Sleep(time.Second)
	}
	t.Errorf("%s: not within its accuracy bound in %d tries (the physical bound held each time); "+
		"a machine that starves the shaper for longer than its bucket's slack delivers less than the wire's rate (docs/lab-hosts.md)", what, labTries)
}

// eth100Goodput returns what eth100 carries for proto's usual payload:
// UDP 1470 bytes (95.70 Mbit/s), TCP MSS 1448 with timestamps (94.15).
func eth100Goodput(t *testing.T, proto string) float64 {
	t.Helper()
	m, err := linerate.LookupMedium("eth100")
	if err != nil {
		t.Fatal(err)
	}
	st, payload := linerate.Stack{Transport: linerate.UDP}, 1470
	if proto == result.TCP {
		st = linerate.Stack{Transport: linerate.TCP, TCPTimestamps: true}
		payload = st.MSS()
	}
	b, err := linerate.Analyze(m, st, payload)
	if err != nil {
		t.Fatal(err)
	}
	return b.GoodputBPS
}

// rateBounds checks got against want: fatal above want+labAbove, ok when
// no more than labAccuracy below.
func rateBounds(t *testing.T, what string, got, want float64) bool {
	t.Helper()
	if got > want*(1+labAbove) {
		t.Fatalf("%s: %.3f Mbit/s is %.2f %% of the %.3f Mbit/s eth100 carries: the lab's wire passed more than a wire can",
			what, got/1e6, 100*got/want, want/1e6)
	}
	return got >= want*(1-labAccuracy)
}

// TestLabEth100UDPGoodput: in `lab up --medium eth100`, `wirebench client
// -u -l 1470 --medium eth100` offered more than the wire carries reads the
// wire's 95.70 Mbit/s (100 × 1470/1536) from the server's report: never
// above it by more than 0.1 %, and within 0.3 % below.
func TestLabEth100UDPGoodput(t *testing.T) {
	const name = "t_eth100"
	needLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runLab(t, "lab", "up", "--name", name, "--medium", "eth100")
	srvDone := startInLab(ctx, t, name, "b", []string{"server"}, "listening")
	want := netlab.WireGoodput(100e6, 1470, 28)
	if d := math.Abs(eth100Goodput(t, result.UDP) - want); d > 1 {
		t.Errorf("linerate's eth100 UDP goodput differs from the lab wire's %.0f bit/s by %.0f", want, d)
	}
	within(t, "client -u -b 110M -l 1470, receiver", func(int) (bool, string) {
		out, _ := runLab(t, append([]string{"lab", "exec", "--name", name, "a", "--"},
			wirebenchArgv("client", "198.18.0.2", "-u", "-b", "110M", "-l", "1470", "-t", "4", "--medium", "eth100", "--json", "--no-save")...)...)
		var r result.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("client JSON: %v\n%s", err, out)
		}
		if r.Receiver == nil || r.Link == nil {
			t.Fatalf("no receiver or link figures: %s", out)
		}
		if math.Abs(r.Link.TheoreticalBPS-want) > 1 {
			t.Errorf("--medium eth100 theory %.0f bit/s, the lab's wire %.0f", r.Link.TheoreticalBPS, want)
		}
		got := r.Receiver.BitsPerSecond
		line := fmt.Sprintf("%.3f Mbit/s over %.3f s (%d datagrams, %d lost), %.2f %% of %.3f; warnings %q",
			got/1e6, r.Receiver.Seconds, r.Receiver.Packets, r.Receiver.Lost, 100*got/want, want/1e6, r.Warnings)
		return rateBounds(t, "UDP 1470 a→b", got, want), line
	})
	runLab(t, "lab", "down", "--name", name)
	<-srvDone
}

// TestLabEth100Wire: the lab wire charges every frame its full wire time,
// whatever the sender does (issue 19):
//   - the matrix's cells, among them UDP download, where our server sends
//     UDP GSO batches, read no more than eth100 carries (95.70 / 94.15
//     Mbit/s), and all four within 0.3 % of it;
//   - iperf3 -u -l 1470 -b 200M (plain sends, no GSO) reads no more than
//     95.70, and within 0.3 % of it;
//   - a 65,500-byte ping (45 fragments leaving at once after idle): with
//     the default bucket (12,500 bytes) the first fragments leave at veth
//     speed and the median reads under the 10.81 ms the wire needs; that
//     is the documented trade and only logged. In a lab made with --burst
//     1538 (one frame) the median may not read under 10.81 ms.
//
// netlab's TestGSOChargedPerFrame shows the per-frame charge from tbf's
// own counters, in a way load cannot move.
func TestLabEth100Wire(t *testing.T) {
	const name = "t_wire"
	needLab(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	runLab(t, "lab", "up", "--name", name, "--medium", "eth100")
	srvDone := startInLab(ctx, t, name, "b", []string{"server", "--allow-reverse", "198.18.0.0/15"}, "listening")
	t.Run("matrix", func(t *testing.T) { labMatrixEth100(t, name) })
	t.Run("iperf3 udp 200M", func(t *testing.T) { labIperf3UDP(ctx, t, name) })
	t.Run("ping 65500", func(t *testing.T) { labPing65500(t, name, true) })
	runLab(t, "lab", "down", "--name", name)
	<-srvDone
	t.Run("ping 65500 tbf", func(t *testing.T) {
		runLab(t, "lab", "up", "--name", name, "--medium", "eth100", "--wire", "tbf")
		defer runLab(t, "lab", "down", "--name", name)
		tcOut, err := exec.Command("tc", "-n", netlab.LabNamespace(name, "a"), "qdisc", "show").CombinedOutput()
		if err != nil || !regexp.MustCompile(`qdisc tbf \S+ dev \S+ root .* burst \d+b`).Match(tcOut) {
			t.Fatalf("--wire tbf: no root tbf on a (%v):\n%s", err, tcOut)
		}
		labPing65500(t, name, false)
	})
}

// labPing65500 is TestLabEth100Wire's ping. On the filled wire (the
// default) the median must be within [10.81 ms, +10 %], in up to labTries
// tries: a loaded machine can move it either way (up by delaying the
// wire's timers, down by delaying the filler, which then leaves part of
// the bucket unspent; measured at load 18: a median of 10.12 ms once). On the tbf wire
// the figures are only logged: its bucket lets the first 12,500 bytes of a
// burst leave at veth speed (9.0 ms on the 2-core VM this was written on).
func labPing65500(t *testing.T, name string, filled bool) {
	m, err := linerate.LookupMedium("eth100")
	if err != nil {
		t.Fatal(err)
	}
	e, err := linerate.AnalyzeEcho(m, linerate.Stack{}, 65500)
	if err != nil {
		t.Fatal(err)
	}
	floor := 2 * e.NoGapBytes * 8 / m.BitRate // seconds: 10.81 ms
	if math.Abs(floor-10.81e-3) > 0.01e-3 {
		t.Fatalf("eth100's round trip for 65,500 bytes is %.3f ms, the issue's 10.81", floor*1e3)
	}
	ping := func() (p50 float64, line string) {
		out, _ := runLab(t, append([]string{"lab", "exec", "--name", name, "a", "--"},
			wirebenchArgv("ping", "198.18.0.2", "-s", "65500", "-c", "20", "-i", "0.05", "--medium", "eth100", "--json", "--no-save")...)...)
		var doc struct {
			Sizes []struct {
				Received int `json:"received"`
				RTT      struct {
					Min, P50, P90 float64
				} `json:"rtt_ms"`
			} `json:"sizes"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Sizes) != 1 || doc.Sizes[0].Received < 10 {
			t.Fatalf("ping JSON (%v): %s", err, out)
		}
		s := doc.Sizes[0]
		return s.RTT.P50 / 1e3, fmt.Sprintf("%d replies, min %.3f, median %.3f, p90 %.3f ms; the wire needs %.3f ms (%.3f with the gap)",
			s.Received, s.RTT.Min, s.RTT.P50, s.RTT.P90, floor*1e3, e.RoundTripWire*1e3)
	}
	if !filled {
		p50, line := ping()
		t.Logf("ping -s 65500 a→b on the tbf wire (load %s): %s; median %.1f %% of the wire's", loadavg(), line, 100*p50/floor)
		return
	}
	for try := 1; ; try++ {
		p50, line := ping()
		t.Logf("try %d: ping -s 65500 a→b on the filled wire (load %s): %s; median %.1f %% of the wire's", try, loadavg(), line, 100*p50/floor)
		if p50 >= floor && p50 <= 1.1*floor {
			return
		}
		if try == labTries {
			t.Fatalf("median %.3f ms in %d tries is not within [%.3f, +10 %%] of what the wire needs (%s)", p50*1e3, try, floor*1e3, line)
		}
	}
}

// labMatrixEth100 is TestLabEth100Wire's matrix.
// Each cell must reach the accuracy bound in one of the tries, not all
// four in the same one: on a busy machine a try in which no cell's sender
// was starved is rarer than one good try per cell.
func labMatrixEth100(t *testing.T, name string) {
	accurate := map[string]bool{}
	within(t, "matrix --medium eth100", func(int) (bool, string) {
		out, _ := runLab(t, append([]string{"lab", "exec", "--name", name, "a", "--"},
			wirebenchArgv("matrix", "198.18.0.2", "--medium", "eth100", "-t", "4", "--json", "--no-save")...)...)
		var doc struct {
			Cells []struct {
				Protocol, Direction, Status, Basis string
				BPS                                *float64 `json:"bits_per_second"`
			} `json:"cells"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Cells) != 4 {
			t.Fatalf("matrix JSON (%v): %s", err, out)
		}
		ok := true
		var line []string
		for _, c := range doc.Cells {
			if c.BPS == nil {
				t.Fatalf("%s %s: no figure (%s): %s", c.Protocol, c.Direction, c.Status, out)
			}
			want := eth100Goodput(t, c.Protocol)
			in := rateBounds(t, c.Protocol+" "+c.Direction, *c.BPS, want)
			// The accuracy bound is on the cells measured at the receiver
			// (all four against our server), each offered more than the
			// wire carries: TCP fills it, UDP is sent at the medium's line
			// rate, 100 Mbit/s, above the 95.70 it carries.
			if c.Basis == "receiver" {
				cell := c.Protocol + " " + c.Direction
				accurate[cell] = accurate[cell] || in
				ok = ok && accurate[cell]
			} else {
				t.Errorf("%s %s: basis %q, want receiver (our server reports what it received)", c.Protocol, c.Direction, c.Basis)
			}
			line = append(line, fmt.Sprintf("%s %s %.3f Mbit/s (%.2f %% of %.2f, %s, %s)",
				c.Protocol, c.Direction, *c.BPS/1e6, 100**c.BPS/want, want/1e6, c.Basis, c.Status))
		}
		return ok, strings.Join(line, "; ")
	})
}

// labIperf3UDP is TestLabEth100Wire's iperf3: a sender that writes one
// datagram per send (no GSO) at twice the wire rate, against iperf3 -s.
func labIperf3UDP(ctx context.Context, t *testing.T, name string) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 not installed")
	}
	want := eth100Goodput(t, result.UDP)
	within(t, "iperf3 -u -l 1470 -b 200M a→b, receiver", func(try int) (bool, string) {
		port := fmt.Sprint(5301 + try)
		srv := exec.CommandContext(ctx, "ip", "netns", "exec", netlab.LabNamespace(name, "b"), "iperf3", "-s", "-1", "-p", port)
		if err := srv.Start(); err != nil {
			t.Fatalf("iperf3 -s: %v", err)
		}
		defer srv.Wait()
		defer srv.Process.Kill()
		var doc struct {
			Error string `json:"error"`
			End   struct {
				Sum         iperf3Sum `json:"sum"`
				SumReceived iperf3Sum `json:"sum_received"`
			} `json:"end"`
		}
		for range 20 { // until the server listens
			out, _ := exec.CommandContext(ctx, "ip", "netns", "exec", netlab.LabNamespace(name, "a"),
				"iperf3", "-c", "198.18.0.2", "-p", port, "-u", "-l", "1470", "-b", "200M", "-t", "4", "--json").Output()
			doc.Error = ""
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatalf("iperf3 JSON: %v\n%s", err, out)
			}
			if !strings.Contains(doc.Error, "unable to connect") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if doc.Error != "" {
			t.Fatalf("iperf3 -c: %s", doc.Error)
		}
		rx := doc.End.SumReceived
		if rx.Seconds == 0 {
			rx = doc.End.Sum // iperf3 before 3.11 has only sum
		}
		if rx.Seconds == 0 || rx.Packets == 0 {
			t.Fatalf("iperf3 reported no receiver figures: %+v", doc.End)
		}
		// iperf3's packets is the count sent; received is that less lost.
		line := fmt.Sprintf("receiver %.3f Mbit/s over %.3f s (%d of %d datagrams received), %.2f %% of %.3f",
			rx.BPS/1e6, rx.Seconds, rx.Packets-rx.Lost, rx.Packets, 100*rx.BPS/want, want/1e6)
		return rateBounds(t, "iperf3 UDP", rx.BPS, want), line
	})
}

// iperf3Sum is the part of iperf3's end.sum (or sum_received) read here.
type iperf3Sum struct {
	Seconds float64 `json:"seconds"`
	BPS     float64 `json:"bits_per_second"`
	Packets int64   `json:"packets"`
	Lost    int64   `json:"lost_packets"`
}
