package iperf3

import (
	"fmt"
	"net"
	"syscall"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sockopt"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// stream (MSS, window, TOS, nodelay, congestion), as iperf3 applies it.
func clientSocket(p *i3wire.Params) sockopt.Options {
	o := sockopt.Options{Buffer: int(p.Window), MSS: int(p.MSS), NoDelay: p.NoDelay, Congestion: p.Congestion}
	if p.TOS != 0 {
		o.TOS, o.SetTOS = int(p.TOS), true
	}
	return o
}

// applySocket sets what the client asked for on a TCP data stream; an MSS
// set here limits our segments but no longer changes what our SYN-ACK
// announced (the client's own MSS in its SYN bounds both directions).
// Failures become warnings of the test's result.
func (t *i3Test) applySocket(c net.Conn) {
	o := clientSocket(t.p)
	if o.IsZero() {
		return
	}
	var warn string
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	if err := o.Apply(sc); err != nil {
		warn = fmt.Sprintf("applying the client's socket options: %v", err)
	}
	b, _ := sockopt.Granted(sc)
	t.hub.mu.Lock()
	defer t.hub.mu.Unlock()
	if warn != "" {
		t.sockWarn = append(t.sockWarn, warn)
	}
	if t.sockBufs == (sockopt.Buffers{}) {
		t.sockBufs = b
	}
}

// recordSocket puts what the client asked for and what was applied into r.
func (t *i3Test) recordSocket(r *result.Result) {
	o := clientSocket(t.p)
	r.Test.Socket = session.DescribeSocket(o, "")
	t.hub.mu.Lock()
	defer t.hub.mu.Unlock()
	for _, w := range t.sockWarn {
		r.Warn(w)
	}
	if r.Test.Socket != nil && o.Buffer > 0 && !t.udp {
		r.Test.Socket.SendBuffer, r.Test.Socket.ReceiveBuffer = t.sockBufs.Send, t.sockBufs.Receive
		if w := t.sockBufs.Shortfall(o.Buffer); w != "" {
			r.Warn(w)
		}
	}
}
