package probe

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// The dialects Detect chooses between (the client's dialect names).
const (
	ChoiceIperf2 = "iperf2"
	ChoiceIperf3 = "iperf3"
)

// Choice is what Detect decided: the dialect to run the test in, and why.
type Choice struct {
	Dialect string // ChoiceIperf2 or ChoiceIperf3
	// Decided is false when the opening could not tell (refused, silent,
	// closed, unknown bytes): Dialect is then iperf2, the default.
	Decided bool
	// Reason says in words what the peer did and what was chosen.
	Reason string
	// Opening is the verdict of the one exchange (OpeningKind values).
	Opening OpeningKind
	// Wirebench is set when the peer is a wirebench server (it answers
	// both dialects on one port).
	Wirebench bool
	Elapsed   time.Duration
}

// detectPause is left after an iperf 2 peer acked the opening, before the
// real test: iperf 2.1.8's server now and then drops a test that starts
// within about 0.3 s of the last one's end ("read tcp flags (peer close)
// failed" in its log, seen after a 300 ms pause); the matrix and a sweep
// against iperf 2 leave 1 s between tests for the same reason.
const detectPause = time.Second

// Detect runs the probe's tcp-opening step alone (one TCP connection, and
// for an iperf3 peer the 1 KiB test that ends its conversation cleanly)
// and chooses the client dialect for the test that follows: iperf3 when
// the peer answered as an iperf3 server, iperf2 when it acked as iperf 2.1+
// or is a wirebench server (which answers both), iperf2 undecided
// otherwise. It waits until an iperf3 server has closed the probe's
// control connection, and a short pause after an iperf 2 ack, so that the
// next test finds the server idle. Device dialects (iperf2-legacy, raw)
// are never chosen: their servers cannot be told apart by their answer.
// Only cfg.Host is contacted.
func Detect(ctx context.Context, cfg Config) (Choice, error) {
	cfg.applyDefaults()
	if err := cfg.Validate(); err != nil {
		return Choice{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, MaxTotal)
	defer cancel()
	start := time.Now()
	p := &prober{cfg: cfg, addr: net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)), res: &result.Probe{
		Iperf2: result.ProbeIperf2{Reverse: result.ProbeUntested, ConnectBack: result.ProbeUntested, ServerReport: result.ProbeUntested},
		Iperf3: result.ProbeIperf3{Reverse: result.ProbeUntested}, Steps: []result.ProbeStep{},
	}}
	kind := p.opening(ctx)
	ch := Choose(kind, p.res)
	if kind == OpeningIperf2Ack {
		select {
		case <-ctx.Done():
		case <-time.After(detectPause):
		}
	}
	ch.Elapsed = time.Since(start)
	return ch, nil
}

// Choose turns the opening's verdict and what the steps found into a
// Choice (pure: tested with canned results).
func Choose(kind OpeningKind, r *result.Probe) Choice {
	c := Choice{Dialect: ChoiceIperf2, Opening: kind, Wirebench: r.Wirebench.Iperf3Ext}
	undecided := func(what string) Choice {
		c.Reason = what + ": cannot tell the dialect, using iperf2 (the default; a device's iperf needs --dialect)"
		return c
	}
	switch kind {
	case OpeningIperf3:
		if r.Wirebench.Iperf3Ext {
			c.Decided = true
			c.Reason = "a wirebench server answered (it speaks iperf2 and iperf3 on one port): using iperf2"
			return c
		}
		c.Dialect, c.Decided = ChoiceIperf3, true
		c.Reason = "the peer answered as an iperf3 server"
		if !r.Iperf3.TestCompleted {
			c.Reason += " (its 1 KiB probe test did not complete: " + r.Iperf3.Error + ")"
		}
		return c
	case OpeningIperf3Busy:
		c.Dialect, c.Decided = ChoiceIperf3, true
		c.Reason = "the peer answered as an iperf3 server that is busy with another test"
		return c
	case OpeningIperf2Ack:
		c.Decided = true
		c.Reason = "the peer acked as iperf " + result.ProbeVersionText(r.Iperf2.Version) + " (CLIENTHDRACK)"
		return c
	case OpeningRefused:
		return undecided("TCP was refused (no TCP listener; an iperf 2 UDP-only server, iperf -s -u, looks like this)")
	case OpeningSilent:
		return undecided("the peer took the opening bytes and said nothing (iperf 2.0.x, lwiperf, zperf, ESP-IDF or any sink)")
	case OpeningClosed:
		return undecided("the peer closed the connection without a byte")
	}
	return undecided("the peer answered bytes of no known dialect")
}

// String is the choice as one line, e.g. "dialect iperf3 (by probe, 31 ms):
// the peer answered as an iperf3 server".
func (c Choice) String() string {
	by := "probe"
	if !c.Decided {
		by = "fallback after probe"
	}
	return fmt.Sprintf("dialect %s (%s, %d ms): %s", c.Dialect, by, c.Elapsed.Milliseconds(), c.Reason)
}

// waitClosed reads c until the peer closes it (or wait passes): an iperf3
// server closes the control connection once it has ended the test, and
// only then takes the next one.
func waitClosed(c net.Conn, wait time.Duration) {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 256)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}
