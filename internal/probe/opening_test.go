package probe

import (
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// fakeOpeningPeer listens on loopback and answers each connection's 37
// opening bytes with answer: ACCESS_DENIED (a busy iperf3 server), a
// reset (an iperf3 listener closed between two tests with the connection
// still queued on it) or a clean close.
func fakeOpeningPeer(t *testing.T, answer func(*net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tc := c.(*net.TCPConn)
			_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(tc, make([]byte, iperf3.CookieSize)); err == nil {
				answer(tc)
			}
			_ = tc.Close()
		}
	}()
	return ln.Addr().String()
}

func answerBusy(c *net.TCPConn)  { _, _ = c.Write([]byte{0xff}) } // ACCESS_DENIED, state -1
func answerReset(c *net.TCPConn) { _ = c.SetLinger(0) }
func answerClose(*net.TCPConn)   {}

// scriptedDial dials each address of script in turn (an address "" is a
// refusal, as the kernel reports one) and counts the dials.
type scriptedDial struct {
	script []string
	n      int
}

func (s *scriptedDial) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	addr := s.script[min(s.n, len(s.script)-1)]
	s.n++
	if addr == "" {
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// runOpening runs the opening step alone with dials from s.
func runOpening(t *testing.T, s *scriptedDial) (OpeningKind, *result.Probe) {
	t.Helper()
	cfg := Config{Host: "127.0.0.1", Port: 5202, Dial: s.dial}
	cfg.applyDefaults()
	p := &prober{cfg: cfg, addr: net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)), res: &result.Probe{Steps: []result.ProbeStep{}}}
	ctx, cancel := context.WithTimeout(context.Background(), MaxTotal)
	defer cancel()
	return p.opening(ctx), p.res
}

// TestOpeningTriesAgainBetweenTests: an iperf3 server between two tests
// refuses the opening or resets it; the opening is tried again until the
// server answers, and the refusal is not taken for a server that takes
// one connection. Before, the first refusal or reset chose iperf2, whose
// test an iperf3 server logs as an error.
func TestOpeningTriesAgainBetweenTests(t *testing.T) {
	reset := fakeOpeningPeer(t, answerReset)
	busy := fakeOpeningPeer(t, answerBusy)
	s := &scriptedDial{script: []string{reset, "", reset, busy}}
	kind, res := runOpening(t, s)
	if kind != OpeningIperf3Busy || s.n != 4 {
		t.Fatalf("opening %s after %d dials, want %s after 4 (reset, refused, reset, ACCESS_DENIED)", kind, s.n, OpeningIperf3Busy)
	}
	if res.TCP.LaterRefused || res.TCP.Opening != string(OpeningIperf3Busy) || len(res.Steps) != 1 {
		t.Errorf("later refused %v, opening %q, steps %+v: want false, %s, one step", res.TCP.LaterRefused, res.TCP.Opening, res.Steps, OpeningIperf3Busy)
	}
	if c := Choose(kind, res); c.Dialect != ChoiceIperf3 || !c.Decided {
		t.Errorf("chose %s (decided %v), want iperf3", c.Dialect, c.Decided)
	}
}

// TestOpeningRefusedEveryTry: where nothing listens, the opening is tried
// once and again after each pause, then said refused once, with the tries.
func TestOpeningRefusedEveryTry(t *testing.T) {
	s := &scriptedDial{script: []string{""}}
	kind, res := runOpening(t, s)
	want := len(openingPauses) + 1
	if kind != OpeningRefused || s.n != want {
		t.Fatalf("opening %s after %d dials, want refused after %d", kind, s.n, want)
	}
	if len(res.Steps) != 1 || !strings.Contains(res.Steps[0].Detail, strconv.Itoa(want)+" tries over") {
		t.Errorf("steps %+v: want one, saying the %d tries", res.Steps, want)
	}
}

// TestOpeningCleanCloseIsAnAnswer: a peer that closes with a FIN and no
// byte has answered; it is not asked again.
func TestOpeningCleanCloseIsAnAnswer(t *testing.T) {
	s := &scriptedDial{script: []string{fakeOpeningPeer(t, answerClose)}}
	kind, _ := runOpening(t, s)
	if kind != OpeningClosed || s.n != 1 {
		t.Fatalf("opening %s after %d dials, want closed after 1", kind, s.n)
	}
}
