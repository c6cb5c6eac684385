package iperf2

import (
	"math"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// TestTCPReceiverFromOurServer: against our server the client's TCP result
// carries the server's own count (sent back after the client's FIN), for
// one stream and for several, and the sender counts acknowledged bytes:
// exactly what the server received.
func TestTCPReceiverFromOurServer(t *testing.T) {
	for _, parallel := range []int{1, 2} {
		s := startOurServer(t)
		cr := runOurClient(t, session.ClientConfig{Host: loHost, Port: s.srv.Port(), Duration: 500 * time.Millisecond, Parallel: parallel})
		srs := s.collect(t, 1) // -P streams are one test on our server
		got := srs[0].Receiver.Bytes
		if cr.Receiver == nil || cr.Receiver.Source != "peer-report" || cr.Receiver.Bytes != got {
			t.Fatalf("-P %d: client's receiver %+v, server counted %d", parallel, cr.Receiver, got)
		}
		if cr.Sender.Basis != result.BasisAcknowledged || cr.Sender.Bytes != got || cr.Sender.BytesWritten != 0 {
			t.Errorf("-P %d: sender %+v, server received %d", parallel, cr.Sender, got)
		}
		if parallel == 1 && math.Abs(cr.Receiver.Seconds-srs[0].Receiver.Seconds) > 1e-6 {
			t.Errorf("receive time %v s, the server's %v s", cr.Receiver.Seconds, srs[0].Receiver.Seconds)
		}
		// Any warning but the CPU's (a drain cut short, figures from
		// bytes written) is a failure.
		if ws := notCPUWarnings(cr.Warnings); len(ws) > 0 {
			t.Errorf("-P %d: warnings %q", parallel, ws)
		}
	}
}
