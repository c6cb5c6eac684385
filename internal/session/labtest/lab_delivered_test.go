//go:build linux

package labtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
)

// labDeliveredTol is issue 9's bound: the client's TCP figure within 0.3 %
// of the wire's TCP goodput.
const labDeliveredTol = 0.003

// TestLabTCPDelivered (issue 9 "Must show"): over the 100 Mbit/s Ethernet
// lab link, shaped both ways, the client's own TCP figure for 2 s and 5 s
// tests is within 0.3 % of the theory for MSS 1448 (94.15 Mbit/s), sending
// and receiving (-R), against our server and against a real `iperf -s`
// (2.1.8).
//
// Sending, the figure is the bytes the server acknowledged over the time
// until the last of them was acknowledged (the client shuts its write side
// down after the last write and waits for the drain); before issue 9 it
// counted bytes written until the clock stopped, which includes what still
// sat in the socket buffer and tbf's queue, and read 95.2 Mbit/s for a 5 s
// test: more than the wire carries. Receiving, it is the bytes read over
// the time from the request until the last one arrived; when that reads
// low, the rate over the time data flowed (from the first byte, the
// receiver's first_byte_s) must be the wire's: a peer that starts late on a
// loaded host (iperf's thread woke 9-20 ms after our request in a CI
// rehearsal, five tries in a row at 93.2-93.7 Mbit/s for 2 s) delays the
// data, not the wire, and the figure from the request is then honestly low.
//
// Each check may run up to labAttempts times, for the reason given at
// labAttempts (the emulated wire itself runs short now and then on a
// loaded two-core VM); every try is logged and faces the same bound. A
// capture of each test's data where they arrive, past the shaper, says
// what the wire really carried (the kernel's stamps and sequence numbers):
// when that is itself short of the theory, the client's figure must match
// it instead, to the same 0.3 %. A CI rehearsal beside two busy loops saw
// iperf 2.1.8's -R 5 s test run 0.4-1.4 % short in five tries in a row.
func TestLabTCPDelivered(t *testing.T) {
	requireLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lab := newLabConfig(t, ctx, netlab.Config{Name: "sessdeliv", RateBPS: labRate, Burst: labBurst, ShapeBothWays: true})
	want := labTCPTheory(t)
	ours := startServer(t, ctx, lab)
	type peer struct {
		name string
		port int
		ours bool
	}
	peers := []peer{{"wirebench", ours.port, true}}
	iperf, err := startIperf2Server(t, ctx, lab)
	if err != nil {
		t.Logf("no real iperf server in the lab, only ours is tested: %v", err)
	} else {
		peers = append(peers, peer{"iperf-2.1.8", iperf.port, false})
	}
	for _, p := range peers {
		for _, reverse := range []bool{false, true} {
			for _, d := range []time.Duration{2 * time.Second, 5 * time.Second} {
				name := fmt.Sprintf("%s/send/%v", p.name, d)
				if reverse {
					name = fmt.Sprintf("%s/-R/%v", p.name, d)
				}
				t.Run(name, func(t *testing.T) {
					attempt(t, func(try int) error {
						cfg := session.ClientConfig{Duration: d, Reverse: reverse, Congestion: "cubic"}
						if !p.ours {
							if err := iperf.ensure(t); err != nil {
								return err
							}
						}
						capture, err := wireCapture(lab, reverse, p.port)
						if err != nil {
							return err
						}
						var cr, sr *result.Result
						if p.ours {
							cr, sr, err = ours.runClient(ctx, lab, cfg)
						} else {
							cr, err = runLabClient(ctx, lab, p.port, cfg)
						}
						pkts := capture.Stop()
						if err != nil {
							return err
						}
						wire := measureWire(pkts, p.port, reverse)
						t.Logf("try %d: the wire carried %s (capture: %+v)", try, wire, capture.Stats())
						return checkDelivered(t, try, cr, sr, reverse, want, wire)
					})
				})
			}
		}
	}
}

// checkDelivered checks the client's own TCP figure against the theory,
// or, when the wire itself carried less (wire, from a capture; zero when
// unknown), against what it carried.
func checkDelivered(t *testing.T, try int, cr, sr *result.Result, reverse bool, want float64, wire wireRate) error {
	t.Helper()
	t.Logf("try %d: %s; client warnings %q", try, loadAvg(), cr.Warnings)
	t.Logf("try %d: client intervals (Mbit/s): %s", try, intervalRates(cr.Intervals))
	var got float64
	if reverse {
		if cr.Receiver == nil || cr.Receiver.Source != "local" {
			return fmt.Errorf("the client has no receiver figure of its own: %+v", cr.Receiver)
		}
		got = cr.Receiver.BitsPerSecond
		t.Logf("try %d: client received %d bytes over %.4f s: %.3f Mbit/s (%+.3f %% of %.3f)",
			try, cr.Receiver.Bytes, cr.Receiver.Seconds, got/1e6, relErr(got, want), want/1e6)
	} else {
		s := cr.Sender
		if s == nil || s.Basis != result.BasisAcknowledged {
			return fmt.Errorf("the client's sender figure is not from acknowledged bytes: %+v", s)
		}
		got = s.BitsPerSecond
		t.Logf("try %d: client: %d bytes acknowledged (%d written) over %.4f s: %.3f Mbit/s (%+.3f %% of %.3f)",
			try, s.Bytes, max(s.BytesWritten, s.Bytes), s.Seconds, got/1e6, relErr(got, want), want/1e6)
		if sr != nil {
			// Our server sends its count back: the client shows it.
			if cr.Receiver == nil || cr.Receiver.Source != "peer-report" || cr.Receiver.Bytes != sr.Receiver.Bytes {
				return fmt.Errorf("the client's receiver %+v is not our server's count %d", cr.Receiver, sr.Receiver.Bytes)
			}
			t.Logf("try %d: server's count (via the client): %d bytes over %.4f s: %.3f Mbit/s (%+.3f %%)", try,
				cr.Receiver.Bytes, cr.Receiver.Seconds, cr.Receiver.BitsPerSecond/1e6, relErr(cr.Receiver.BitsPerSecond, want))
			if s.Bytes != cr.Receiver.Bytes {
				return fmt.Errorf("the server received %d bytes, the client counts %d acknowledged", cr.Receiver.Bytes, s.Bytes)
			}
		}
	}
	fig := got // the figure over the time data flowed
	if reverse && !within(got, want, labDeliveredTol) && got < want {
		// The receive's clock starts at the request, so a peer slow to
		// start sending (iperf's thread on a loaded host) lowers the
		// figure by its start's share of the test. Then the rate while
		// data flowed must be the wire's.
		r := cr.Receiver
		if r.FirstByteSeconds > 0 && r.FirstByteSeconds < r.Seconds {
			fig = float64(r.Bytes) * 8 / (r.Seconds - r.FirstByteSeconds)
			t.Logf("try %d: the first byte came %.1f ms after the request; over the %.4f s data flowed: %.3f Mbit/s (%+.3f %%)",
				try, 1e3*r.FirstByteSeconds, r.Seconds-r.FirstByteSeconds, fig/1e6, relErr(fig, want))
			if within(fig, want, labDeliveredTol) {
				return nil
			}
		}
	}
	if within(got, want, labDeliveredTol) {
		return nil
	}
	if wire.bps > 0 && !within(wire.bps, want, labDeliveredTol) {
		// The emulated wire ran short of its nominal rate (tbf's timer
		// fires late on a loaded host; see labAttempts): the kernel's own
		// capture says what it carried, and the client's figure must be
		// that, to the same 0.3 %. The wire's window is from its first
		// full segment to its last; the client's figure is from the
		// request (a little longer: the peer's start), or from the first
		// byte read (a little shorter when the reader woke late), and
		// either may match.
		t.Logf("try %d: the wire itself carried %.3f Mbit/s (%+.3f %% of %.3f); the client's %.3f Mbit/s is %+.3f %% of that (over the time data flowed: %+.3f %%)",
			try, wire.bps/1e6, relErr(wire.bps, want), want/1e6, got/1e6, relErr(got, wire.bps), relErr(fig, wire.bps))
		if within(got, wire.bps, labDeliveredTol) || within(fig, wire.bps, labDeliveredTol) {
			return nil
		}
		return fmt.Errorf("the client's TCP figure %.3f Mbit/s is not within %.1f %% of the %.3f the wire carried",
			got/1e6, 100*labDeliveredTol, wire.bps/1e6)
	}
	return fmt.Errorf("the client's TCP figure %.3f Mbit/s is not within %.1f %% of %.3f", got/1e6, 100*labDeliveredTol, want/1e6)
}

// runLabClient runs our client inside A against a server in B.
func runLabClient(ctx context.Context, lab *netlab.Lab, port int, cfg session.ClientConfig) (r *result.Result, err error) {
	cfg.Host, cfg.Port = lab.B.Addr.String(), port
	err = lab.A.Do(func() (err error) {
		r, err = dialect.RunClient(ctx, cfg)
		return err
	})
	if err == nil && r.Error != "" {
		err = fmt.Errorf("client result carries an error: %s", r.Error)
	}
	return r, err
}

// labIperf is the real `iperf -s` (2.1.8) in B, started again when it has
// died: iperf 2.1.8 itself sometimes aborts after a -R or -d test (a glibc
// assertion in its mutex code, or a segfault; also seen with our probe), and
// a dead peer says nothing about our figures. Every restart is logged with
// what iperf printed, so such a crash stays visible.
type labIperf struct {
	ctx    context.Context
	lab    *netlab.Lab
	port   int
	cmd    *exec.Cmd
	out    *loopback.Buffer
	cancel context.CancelFunc
	done   chan struct{}
}

// startIperf2Server runs the real `iperf -s` (2.1.8) in B until the test
// ends.
func startIperf2Server(t *testing.T, ctx context.Context, lab *netlab.Lab) (*labIperf, error) {
	t.Helper()
	if _, err := exec.LookPath("iperf"); err != nil {
		return nil, err
	}
	s := &labIperf{ctx: ctx, lab: lab, port: 5001} // B is our own namespace: nothing else listens there
	t.Cleanup(s.stop)
	return s, s.start()
}

// start runs iperf and waits until it listens. It runs at nice -10: the
// check is of our client's figure, and the peer must keep the wire full.
// At CI's load (two busy loops beside the tests) iperf's sending thread,
// at nice 0, was starved often enough that the wire idled: its own report
// said 93.0, 88.9, 92.9 and 89.7 Mbit/s for four -R tries in a row, our
// client's the same, and the check failed all five tries; at nice -10 the
// tries that run short are the emulated wire's (see labAttempts).
func (s *labIperf) start() error {
	sctx, cancel := context.WithCancel(s.ctx)
	s.out, s.cancel, s.done = &loopback.Buffer{}, cancel, make(chan struct{})
	s.cmd = s.lab.B.Command(sctx, "nice", "-n", "-10", "iperf", "-s", "-B", s.lab.B.Addr.String(), "-p", strconv.Itoa(s.port))
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		cancel()
		close(s.done)
		return err
	}
	done := s.done
	go func() { _ = s.cmd.Wait(); close(done) }()
	// Wait until the port cannot be bound in B: iperf listens on it (a
	// probe connection would count as a test).
	addr := net.JoinHostPort(s.lab.B.Addr.String(), strconv.Itoa(s.port))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		err := s.lab.B.Do(func() error {
			ln, err := net.Listen("tcp", addr)
			if err == nil {
				ln.Close()
			}
			return err
		})
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil
		}
	}
	return fmt.Errorf("iperf -s did not listen on %s within 10 s", addr)
}

// ensure starts iperf again if it has died, logging how it ended.
func (s *labIperf) ensure(t *testing.T) error {
	select {
	case <-s.done:
	default:
		return nil
	}
	t.Logf("KNOWN PEER CRASH: iperf 2.1.8 -s ended (%v); it printed:\n%s", s.cmd.ProcessState, s.out)
	s.cancel()
	return s.start()
}

// stop ends iperf.
func (s *labIperf) stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
}
