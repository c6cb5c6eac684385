package iperf2

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// TestEndedAtOnceHint: an iperf2-dialect TCP test that the peer resets, or
// closes while we receive, in its first moments fails with an error naming
// the likely dialect mismatch (an iperf3 server); a reset later in the
// test, a close at the end, and a -n test the peer ends when its bytes are
// sent do not. A timed -R test that got one state byte and nothing more
// (iperf3 waiting for its parameters) names it too.
func TestEndedAtOnceHint(t *testing.T) {
	t0 := time.Unix(1000, 0)
	reset := fmt.Errorf("write tcp 127.0.0.1:1->127.0.0.1:2: write: %w", syscall.ECONNRESET)
	sentFor := func(d time.Duration, err error) session.TCPSent {
		return session.TCPSent{Res: engine.TCPResult{Bytes: 60, Start: t0, End: t0.Add(d)}, Err: err}
	}
	for _, tc := range []struct {
		name      string
		cfg       session.ClientConfig
		out       tcpStreamOutcome
		receiving bool
		want      string // in r.Error; "" = no hint there
	}{
		{"reset at once", session.ClientConfig{Duration: 10 * time.Second},
			tcpStreamOutcome{sent: sentFor(300*time.Millisecond, reset)}, false,
			"the peer reset the connection at once (0.30 s into the test): " + session.Iperf3Hint + " (write tcp"},
		{"reset of the header", session.ClientConfig{Duration: 10 * time.Second},
			tcpStreamOutcome{sent: session.TCPSent{Err: fmt.Errorf("sending the test header: %w", syscall.EPIPE)}}, false,
			"the peer reset the connection at once (0.00 s into the test): " + session.Iperf3Hint},
		{"reset late", session.ClientConfig{Duration: 10 * time.Second},
			tcpStreamOutcome{sent: sentFor(5*time.Second, reset)}, false, ""},
		{"-R closed at once", session.ClientConfig{Duration: 10 * time.Second, Reverse: true},
			tcpStreamOutcome{recv: engine.TCPResult{Bytes: 1}, recvEnded: 3 * time.Millisecond, recvEOF: true}, true,
			"the peer closed the connection at once (0.00 s into the test, after 1 bytes): " + session.Iperf3Hint},
		{"-R closed at the end", session.ClientConfig{Duration: 10 * time.Second, Reverse: true},
			tcpStreamOutcome{recv: engine.TCPResult{Bytes: 1 << 30}, recvEnded: 10 * time.Second, recvEOF: true}, true, ""},
		{"-R -n ends when sent", session.ClientConfig{Bytes: 1 << 10, Reverse: true},
			tcpStreamOutcome{recv: engine.TCPResult{Bytes: 1 << 10}, recvEnded: time.Millisecond, recvEOF: true}, true, ""},
		{"-R got one state byte", session.ClientConfig{Duration: 10 * time.Second, Reverse: true},
			tcpStreamOutcome{recv: engine.TCPResult{Bytes: 1}, recvEnded: 15 * time.Second, recvEOF: true}, true,
			"the peer sent only 1 byte in the whole test: " + session.Iperf3Hint},
		{"-R stopped by us", session.ClientConfig{Duration: 10 * time.Second, Reverse: true},
			tcpStreamOutcome{recv: engine.TCPResult{Bytes: 5}, recvEnded: time.Millisecond, recvStopped: true}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Parallel = 1
			r := &result.Result{}
			fillTCPClientResult(r, &cfg, []tcpStreamOutcome{tc.out}, !tc.receiving, tc.receiving)
			if tc.want == "" {
				if strings.Contains(r.Error, session.Iperf3Hint) {
					t.Errorf("error %q names the iperf3 mismatch", r.Error)
				}
				return
			}
			if !strings.HasPrefix(r.Error, tc.want) {
				t.Errorf("error %q\nwant it to start with %q", r.Error, tc.want)
			}
			for _, w := range r.Warnings {
				if strings.Contains(w, "--dialect iperf3") {
					t.Errorf("the hint is also a warning: %q", w)
				}
			}
		})
	}
}
