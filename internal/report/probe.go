package report

import (
	"fmt"
	"io"

	"github.com/wirebench/wirebench/internal/result"
)

// WriteProbe prints a probe for a person: the summary, the findings per dialect,
// then every step with its verdict and duration.
func WriteProbe(w io.Writer, r *result.Probe) error {
	ew := &probeWriter{w: w}
	ew.printf("%s\n", r.Summary)
	if r.Iperf2.TCP || r.Iperf2.TCPNoAck {
		ack := "CLIENTHDRACK, version " + result.ProbeVersionText(r.Iperf2.Version)
		if !r.Iperf2.TCP {
			ack = "no CLIENTHDRACK"
		}
		ew.printf("  iperf2 TCP: %s; reverse (-R) %s; connect-back (-d) %s\n", ack, r.Iperf2.Reverse, r.Iperf2.ConnectBack)
	}
	if r.TCP.LaterRefused {
		ew.printf("  TCP: later connections were refused (a server that takes one connection)\n")
	}
	if rep := r.Iperf2.Report; rep != nil {
		ew.printf("  iperf2 UDP: %s report layout (%d bytes, flags %s): %d datagrams, %d bytes, %d lost; we sent %d + FIN\n",
			r.Iperf2.UDPLayout, rep.ReplyLen, rep.Flags, rep.Datagrams, rep.Bytes, rep.Lost, rep.SentData)
	}
	if r.Iperf3.Answered {
		state := "test completed"
		switch {
		case r.Iperf3.Busy:
			state = "busy (ACCESS_DENIED)"
		case !r.Iperf3.TestCompleted:
			state = "test failed: " + r.Iperf3.Error
		}
		ew.printf("  iperf3: %s; version not sent by iperf3; reverse (-R) %s\n", state, r.Iperf3.Reverse)
	}
	if r.Wirebench.EchoTCP || r.Wirebench.EchoUDP || r.Wirebench.Iperf3Ext {
		ew.printf("  wirebench: echo TCP %v, echo UDP %v, iperf3 extension %v %s\n",
			r.Wirebench.EchoTCP, r.Wirebench.EchoUDP, r.Wirebench.Iperf3Ext, r.Wirebench.Agent)
	}
	for _, s := range r.Steps {
		ew.printf("  step %-15s %-12s %7.1f ms  %s\n", s.Name, s.Verdict, s.ElapsedMs, s.Detail)
	}
	ew.printf("  probe took %.0f ms\n", r.ElapsedMs)
	return ew.err
}

// probeWriter keeps the first write error.
type probeWriter struct {
	w   io.Writer
	err error
}

func (e *probeWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
