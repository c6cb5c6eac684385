package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
	"github.com/wirebench/wirebench/internal/wire/iperf3"
)

// openingPauses are the waits before the opening is tried again after it
// was refused, or reset before a byte came back. iperf3's server closes
// its listening socket after each test and opens a new one: an opening
// that follows a test at once (a matrix's last cell, a script's previous
// run) finds no listener, or the old one, which resets the connections
// still queued on it. Against iperf3 3.12, 37 of 150 openings made at once
// after a test were refused or reset, and each would have fallen back to
// iperf2. A port where nothing listens refuses every try and costs their
// sum, 1 s. A peer that closes cleanly (a FIN) is not tried again: that
// is its answer.
var openingPauses = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond}

// opening sends the opening cookie (see OpeningCookie) and classifies the
// answer, again after each openingPauses while it is refused or reset;
// for an iperf3 peer it goes on with the tiny test on the same
// connection. It records one tcp-opening step.
func (p *prober) opening(ctx context.Context) OpeningKind {
	t0 := time.Now()
	last, tries := tryAgain(ctx, openingPauses, func() (openingTry, bool) {
		t := p.openingOnce(ctx)
		return t, t.again
	})
	if last.again {
		last.detail += fmt.Sprintf(" (%d tries over %v; an iperf3 server between two tests answers within that)",
			tries, time.Since(t0).Round(time.Millisecond))
	}
	if last.kind != OpeningRefused {
		// A refusal before the answer was the gap between two tests, not
		// a server that takes one connection.
		p.res.TCP.LaterRefused = false
	}
	p.res.TCP.Opening = string(last.kind)
	p.step("tcp-opening", string(last.kind), last.detail, t0)
	if last.kind == OpeningIperf3 {
		p.iperf3Test(ctx, last.conn, last.cookie)
	}
	return last.kind
}

// openingTry is one try of the opening: its verdict, said in words,
// whether it may be tried again, and for an iperf3 peer the connection
// and cookie its tiny test goes on with.
type openingTry struct {
	kind   OpeningKind
	detail string
	again  bool
	conn   net.Conn
	cookie iperf3.Cookie
}

// openingOnce makes one try of the opening; only an iperf3 answer leaves
// its connection open.
func (p *prober) openingOnce(ctx context.Context) openingTry {
	c, err := p.dial(ctx)
	if err != nil {
		return openingTry{kind: OpeningRefused, detail: err.Error(), again: isRefused(err) || isReset(err)}
	}
	ck, err := iperf3.NewCookie(nil)
	if err != nil {
		_ = c.Close()
		return openingTry{kind: OpeningOther, detail: err.Error()}
	}
	ck = OpeningCookie(ck)
	if _, err := c.Write(ck.AppendWire(nil)); err != nil {
		_ = c.Close()
		return openingTry{kind: OpeningClosed, detail: "writing the cookie: " + err.Error(), again: isReset(err)}
	}
	reply, ended, end := readReply(ctx, c, p.cfg.Timeout, OpeningNeedsMore, iperf2.ClientHdrAckSizeTS)
	kind, ver := ClassifyOpening(reply, ended)
	t := openingTry{kind: kind, detail: fmt.Sprintf("%s back: % x", units.Plural(len(reply), "byte"), reply[:min(len(reply), 20)])}
	switch kind {
	case OpeningIperf3:
		p.res.Iperf3.Answered, p.res.Iperf3.Reverse = true, result.ProbeYes
		t.detail, t.conn, t.cookie = "PARAM_EXCHANGE", c, ck
		return t
	case OpeningIperf3Busy:
		p.res.Iperf3.Answered, p.res.Iperf3.Busy, p.res.Iperf3.Reverse = true, true, result.ProbeYes
		_ = c.Close()
		t.detail = "ACCESS_DENIED: a test is running"
		return t
	case OpeningIperf2Ack:
		p.res.Iperf2.TCP, p.res.Iperf2.Version = true, ver
		t.detail = "CLIENTHDRACK, version " + result.ProbeVersionText(ver)
	case OpeningSilent:
		p.res.Iperf2.TCPNoAck = true
		t.detail = "accepted 37 bytes, no reply within " + p.cfg.Timeout.String()
	case OpeningClosed:
		t.again = isReset(end)
		if t.again {
			t.detail = "reset before a byte came back"
		}
	}
	closeGracefully(c, p.cfg.Timeout)
	return t
}

// isReset says err is the peer's reset of the connection.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
