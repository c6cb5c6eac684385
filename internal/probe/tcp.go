package probe

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// The iperf2 feature probes ask for a 20 ms test, not a byte count: iperf
// 2.1.8's server crashed (SIGSEGV) after about 17 runs of `iperf -c -R -n 64K`
// from its own client, and a byte-count -R probe crashed it the same way.
// 20 ms of loopback TCP is some tens of MB, which drainCounting reads whole.
const (
	featureTest = 20 * time.Millisecond
	maxDrain    = 512 << 20 // most bytes read from one feature probe
)

// readReply reads from c until more(b) is false, the peer closes (ended;
// end is then the read's error, io.EOF or a reset), max bytes have
// arrived, or wait passes.
func readReply(ctx context.Context, c net.Conn, wait time.Duration, more func([]byte) bool, max int) (b []byte, ended bool, end error) {
	deadline := time.Now().Add(wait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetReadDeadline(deadline)
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	buf := make([]byte, max)
	n := 0
	for n < max && more(buf[:n]) {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return buf[:n], false, nil
			}
			return buf[:n], true, err
		}
	}
	return buf[:n], false, nil
}

// closeGracefully half-closes c, reads what the peer still sends (at most
// maxDrain bytes, until wait) so that no unread data turns the close into a
// reset, and closes. It returns the bytes drained and whether the peer
// closed its side in time.
func closeGracefully(c net.Conn, wait time.Duration) (int64, bool) {
	defer c.Close()
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	n, err := io.Copy(io.Discard, io.LimitReader(c, maxDrain))
	return n, err == nil && n < maxDrain
}

// headerProbe sends a plain 2.1 TCP header (EXTEND, 60 bytes) and waits for
// the CLIENTHDRACK.
func (p *prober) headerProbe(ctx context.Context) {
	t0 := time.Now()
	c, err := p.dial(ctx)
	if err != nil {
		p.step("iperf2-header", "no connection", err.Error(), t0)
		return
	}
	h := iperf2.NewClientHeader(false, 1, int32(p.cfg.Port))
	h.Amount = iperf2.AmountForBytes(int64(h.Len()))
	if _, err := c.Write(h.AppendTo(nil)); err != nil {
		_ = c.Close()
		p.step("iperf2-header", "closed", err.Error(), t0)
		return
	}
	reply, ended, _ := readReply(ctx, c, p.cfg.Timeout, OpeningNeedsMore, iperf2.ClientHdrAckSizeTS)
	closeGracefully(c, p.cfg.Timeout)
	if ver, ok := AckVersion(reply); ok {
		p.res.Iperf2.TCP, p.res.Iperf2.Version = true, ver
		p.step("iperf2-header", "ack", "CLIENTHDRACK, version "+result.ProbeVersionText(ver), t0)
		return
	}
	if len(reply) == 0 && !ended {
		p.res.Iperf2.TCPNoAck = true
		p.step("iperf2-header", "no ack", "60-byte 2.1 header accepted, no CLIENTHDRACK", t0)
		return
	}
	p.step("iperf2-header", "other", fmt.Sprintf("%s, closed=%v", units.Plural(len(reply), "byte"), ended), t0)
}

// iperf2Gap is the pause before each test step after the first: iperf
// 2.1.8's server may leave a test unserved, or crash, when one arrives at
// once after another ends.
const iperf2Gap = 300 * time.Millisecond

// again pauses iperf2Gap before a test step and returns the prefix of its
// detail ("" on the first try).
func again(ctx context.Context, try int) string {
	select {
	case <-ctx.Done():
	case <-time.After(iperf2Gap):
	}
	if try == 1 {
		return ""
	}
	return fmt.Sprintf("try %d: ", try)
}

// reverseProbe asks for -R (VERSION2 + REVERSE, a 20 ms test) and counts what the
// server sends on our connection. It returns true when the server sent
// nothing (it stayed silent or closed), the case worth a second try.
func (p *prober) reverseProbe(ctx context.Context, try int) (silent bool) {
	prefix := again(ctx, try)
	t0 := time.Now()
	c, err := p.dial(ctx)
	if err != nil {
		p.step("iperf2-reverse", "no connection", err.Error(), t0)
		return
	}
	h := iperf2.NewClientHeader(false, 1, int32(p.cfg.Port))
	h.Flags |= iperf2.FlagVersion2
	h.UpperFlags |= iperf2.UpperReverse
	h.Amount = iperf2.AmountForDuration(featureTest)
	if _, err := c.Write(h.AppendTo(nil)); err != nil {
		_ = c.Close()
		p.res.Iperf2.Reverse = result.ProbeNo
		p.step("iperf2-reverse", "no", err.Error(), t0)
		return
	}
	n, ended := drainCounting(c, 3*p.cfg.Timeout)
	_ = c.Close()
	detail := prefix + fmt.Sprintf("%d bytes received on our connection, server closed=%v", n, ended)
	if n > 0 {
		p.res.Iperf2.Reverse = result.ProbeYes
		p.step("iperf2-reverse", "yes", detail, t0)
		return false
	}
	p.res.Iperf2.Reverse = result.ProbeNo
	p.step("iperf2-reverse", "no", detail, t0)
	// Silent or closed without data, both are worth a second try: a
	// server that ends its sends with the test's clock sends nothing when
	// its sender starts more than the 20 ms test late (seen against our
	// own server on a loaded machine).
	return true
}

// drainCounting reads c until EOF or wait (at most maxDrain bytes), skipping
// a leading CLIENTHDRACK, and returns the data bytes and whether the peer
// closed.
func drainCounting(c net.Conn, wait time.Duration) (int64, bool) {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 64*1024)
	var n int64
	first := true
	for n < maxDrain {
		m, err := c.Read(buf)
		if first && m >= 12 {
			if k := iperf2.ClientHdrAckLen(buf[:m]); k > 0 && k <= m {
				m -= k
			}
			first = false
		}
		n += int64(m)
		if err != nil {
			return n, !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
	return n, false
}

// dualProbe asks for -d (VERSION1 | RUN_NOW, mPort = a listener of ours on
// the local address that reaches the peer) and waits for the connect-back.
// Only connections from the peer's own address are taken. It returns true
// when no connect-back came within the wait, the case worth a second try.
func (p *prober) dualProbe(ctx context.Context, try int) (silent bool) {
	prefix := again(ctx, try)
	t0 := time.Now()
	c, err := p.dial(ctx)
	if err != nil {
		p.step("iperf2-dual", "no connection", prefix+err.Error(), t0)
		return false
	}
	defer func() { closeGracefully(c, p.cfg.Timeout) }()
	local := c.LocalAddr().(*net.TCPAddr)
	peer := c.RemoteAddr().(*net.TCPAddr)
	ln, err := p.cfg.Listen(ctx, "tcp", net.JoinHostPort(local.IP.String(), "0"))
	if err != nil {
		p.step("iperf2-dual", "untested", prefix+"listening for the connect-back: "+err.Error(), t0)
		return false
	}
	defer ln.Close()
	h := iperf2.NewClientHeader(false, 1, int32(ln.Addr().(*net.TCPAddr).Port))
	h.Flags |= iperf2.FlagVersion1 | iperf2.FlagRunNow
	h.Amount = iperf2.AmountForDuration(featureTest)
	if _, err := c.Write(h.AppendTo(nil)); err != nil {
		p.res.Iperf2.ConnectBack = result.ProbeNo
		p.step("iperf2-dual", "no", prefix+err.Error(), t0)
		return false
	}
	back, err := acceptFrom(ln, peer.IP, 3*p.cfg.Timeout)
	if err != nil {
		p.res.Iperf2.ConnectBack = result.ProbeNo
		p.step("iperf2-dual", "no", prefix+"no connect-back: "+err.Error(), t0)
		return true
	}
	n, ended := drainCounting(back, 3*p.cfg.Timeout)
	_ = back.Close()
	p.res.Iperf2.ConnectBack = result.ProbeYes
	p.step("iperf2-dual", "yes", prefix+fmt.Sprintf("connected back from %s, %d bytes, closed=%v", back.RemoteAddr(), n, ended), t0)
	return false
}

// acceptFrom accepts one connection from ip within wait; connections from
// other addresses are closed at once.
func acceptFrom(ln net.Listener, ip net.IP, wait time.Duration) (net.Conn, error) {
	if tl, ok := ln.(*net.TCPListener); ok {
		_ = tl.SetDeadline(time.Now().Add(wait))
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return nil, err
		}
		if a, ok := c.RemoteAddr().(*net.TCPAddr); ok && a.IP.Equal(ip) {
			return c, nil
		}
		_ = c.Close()
	}
}

// echoTCP sends one wirebench echo request and a bye.
func (p *prober) echoTCP(ctx context.Context) {
	t0 := time.Now()
	c, err := p.dial(ctx)
	if err != nil {
		p.step("echo-tcp", "no connection", err.Error(), t0)
		return
	}
	id := randID()
	if _, err := c.Write(echo.Append(nil, echo.Message{Kind: echo.KindRequest, Len: echo.HeaderLen, ID: id})); err != nil {
		_ = c.Close()
		p.step("echo-tcp", "no", err.Error(), t0)
		return
	}
	reply, _, _ := readReply(ctx, c, p.cfg.Timeout, func(b []byte) bool { return len(b) < echo.HeaderLen }, echo.HeaderLen)
	ver, ok := EchoReplyOK(reply, id)
	if ok {
		_, _ = c.Write(echo.Append(nil, echo.Message{Kind: echo.KindBye, Len: echo.HeaderLen, ID: id + 1}))
	}
	closeGracefully(c, p.cfg.Timeout)
	if !ok {
		p.step("echo-tcp", "no", units.Plural(len(reply), "byte")+" back, not an echo reply", t0)
		return
	}
	p.res.Wirebench.EchoTCP, p.res.Wirebench.EchoVersion = true, ver
	p.step("echo-tcp", "yes", fmt.Sprintf("echo reply, format version %d", ver), t0)
}

func randID() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:]) >> 1
}
