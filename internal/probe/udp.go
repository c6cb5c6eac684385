package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// The tiny iperf2 UDP test.
const (
	udpDatagrams = 5
	udpLen       = 128
	finGap       = 50 * time.Millisecond
	// udpGap spaces the datagrams: iperf 2.1.8 reported 0 bytes and a 0 s
	// duration (its reporter had not caught up) for a test whose datagrams
	// and FIN all arrived within a few microseconds.
	udpGap = 2 * time.Millisecond
)

// iperf2UDP sends udpDatagrams 2.1-style datagrams (ids 1..n, header at 16)
// and a FIN (−(n+1), then one lower per retry every finGap, as 2.1.8 does)
// until a server report arrives or the wait runs out, and classifies the
// replies.
func (p *prober) iperf2UDP(ctx context.Context) {
	t0 := time.Now()
	c, err := p.cfg.Dial(ctx, "udp", p.addr)
	if err != nil {
		p.step("iperf2-udp", "error", err.Error(), t0)
		return
	}
	defer c.Close()
	h := iperf2.NewClientHeader(true, 1, int32(p.cfg.Port))
	h.Amount = iperf2.AmountForDuration(100 * time.Millisecond)
	hdr := h.AppendUDPTo(nil)
	b := make([]byte, udpLen)
	copy(b[iperf2.LayoutModern.HeaderLen():], hdr)
	for id := int64(1); id <= udpDatagrams; id++ {
		iperf2.PutDatagram(b, iperf2.LayoutModern, id, time.Now())
		if _, err := c.Write(b); err != nil {
			p.noUDPReport(err, 0, 0, t0)
			return
		}
		time.Sleep(udpGap)
	}
	replies, tries, err := finExchange(ctx, c, b, p.cfg.Timeout*2)
	ec := iperf2.EchoCheck{Layout: iperf2.LayoutModern, Header: hdr,
		FirstFIN: iperf2.FINID(iperf2.LayoutModern, udpDatagrams, 0),
		LastFIN:  iperf2.FINID(iperf2.LayoutModern, udpDatagrams, max(tries-1, 0))}
	v := ClassifyUDPReplies(replies, ec)
	p.res.Iperf2.EchoReplies = v.Echoes
	if v.Report == nil {
		p.noUDPReport(err, len(replies), tries, t0)
		return
	}
	r := v.Report
	p.res.Iperf2.UDP, p.res.Iperf2.UDPLayout, p.res.Iperf2.ServerReport = true, v.Layout.String(), result.ProbeYes
	p.res.Iperf2.Report = &result.ProbeUDPReport{
		Flags: fmt.Sprintf("%08x", r.Flags), Bytes: r.TotalBytes, Datagrams: r.Datagrams, Lost: r.Errors,
		OutOfOrder: r.OutOfOrder, JitterMs: ms(r.Jitter), DurationMs: ms(r.Stop), ReplyLen: v.ReplyLen,
		SentData: udpDatagrams, SentBytes: (udpDatagrams + 1) * udpLen,
	}
	p.step("iperf2-udp", v.Layout.String(), fmt.Sprintf("%d-byte report after %s, flags %08x, %d datagrams, %d bytes",
		v.ReplyLen, units.Plural(tries, "FIN"), r.Flags, r.Datagrams, r.TotalBytes), t0)
}

// noUDPReport records a UDP test that got no report.
func (p *prober) noUDPReport(err error, replies, tries int, t0 time.Time) {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		p.step("iperf2-udp", "refused", "ICMP port unreachable: no UDP listener", t0)
	case replies > 0:
		p.res.Iperf2.ServerReport = result.ProbeNo
		p.step("iperf2-udp", "no report", fmt.Sprintf("%d repl(ies), none a server report", replies), t0)
	case err != nil:
		p.step("iperf2-udp", "error", err.Error(), t0)
	default:
		p.step("iperf2-udp", "silent", "no reply to "+units.Plural(tries, "FIN"), t0)
	}
}

// finExchange sends FINs from datagram b every finGap until a reply that
// could be a report arrives, or wait passes. It returns every reply read,
// the FINs sent, and the read error that ended it (nil on a reply or a
// timeout).
func finExchange(ctx context.Context, c net.Conn, b []byte, wait time.Duration) ([][]byte, int, error) {
	end := time.Now().Add(wait)
	buf := make([]byte, 64*1024)
	var replies [][]byte
	tries := 0
	for time.Now().Before(end) && ctx.Err() == nil {
		iperf2.PutDatagram(b, iperf2.LayoutModern, iperf2.FINID(iperf2.LayoutModern, udpDatagrams, tries), time.Now())
		if _, err := c.Write(b); err != nil {
			return replies, tries, err
		}
		tries++
		_ = c.SetReadDeadline(time.Now().Add(finGap))
		n, err := c.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			return replies, tries, err
		}
		replies = append(replies, append([]byte(nil), buf[:n]...))
		if _, _, perr := iperf2.ParseServerReport(buf[:n]); perr == nil {
			return replies, tries, nil
		}
	}
	return replies, tries, nil
}

// echoUDP sends one wirebench echo request datagram and a bye.
func (p *prober) echoUDP(ctx context.Context) {
	t0 := time.Now()
	c, err := p.cfg.Dial(ctx, "udp", p.addr)
	if err != nil {
		p.step("echo-udp", "error", err.Error(), t0)
		return
	}
	defer c.Close()
	id := randID()
	if _, err := c.Write(echo.Append(nil, echo.Message{Kind: echo.KindRequest, Len: echo.HeaderLen, ID: id})); err != nil {
		p.step("echo-udp", "no", err.Error(), t0)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(p.cfg.Timeout))
	buf := make([]byte, 2048)
	n, err := c.Read(buf)
	if err != nil {
		p.step("echo-udp", "no", err.Error(), t0)
		return
	}
	ver, ok := EchoReplyOK(buf[:n], id)
	if !ok {
		p.step("echo-udp", "no", fmt.Sprintf("%d-byte reply, not an echo reply", n), t0)
		return
	}
	_, _ = c.Write(echo.Append(nil, echo.Message{Kind: echo.KindBye, Len: echo.HeaderLen, ID: id + 1}))
	p.res.Wirebench.EchoUDP, p.res.Wirebench.EchoVersion = true, ver
	p.step("echo-udp", "yes", fmt.Sprintf("echo reply, format version %d", ver), t0)
}
