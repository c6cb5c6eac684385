package iperf2

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// finStyle is how a UDP sender ends its test.
type finStyle int

const (
	finModern  finStyle = iota // FIN −(n+1), decremented every 10 ms, up to 200 retries, report awaited
	finLegacy                  // FIN −n repeated, 10 × 250 ms, report awaited
	finReverse                 // one negative-id datagram, no report (2.1 -R)
)

// udpStream is one iperf2 UDP sending stream.
type udpStream struct {
	layout   i2wire.Layout
	header   []byte // test header placed after the datagram header; nil for none
	length   int
	pps      float64
	duration time.Duration
	bytes    int64
	fin      finStyle
	// batch is the most datagrams handed to the socket at once (0: the
	// engine's default); each is a copy of the template.
	batch int
}

// template builds the datagram every send copies: datagram header space,
// the test header, then the digit pattern (offsets up to 36 zeroed when
// there is no test header, so no 2.1 server mistakes the pattern for flags,
// §1.7).
func (s *udpStream) template() []byte {
	b := make([]byte, s.length)
	session.FillPattern(b)
	hl := s.layout.HeaderLen()
	clear(b[:min(len(b), hl)])
	if s.header == nil {
		clear(b[hl:min(len(b), 36)])
	} else if hl < len(b) {
		copy(b[hl:], s.header)
	}
	return b
}

// send runs the paced send of the stream's data datagrams.
func (s *udpStream) send(ctx context.Context, conn udpio.Conn, dst netip.AddrPort, tmpl []byte, c *stats.Counters) (engine.UDPSendResult, error) {
	layout := s.layout
	return engine.SendUDP(ctx, conn, engine.UDPSendConfig{
		Template: tmpl,
		Stamp:    func(b []byte, id int64, now time.Time) { i2wire.PutDatagram(b, layout, id, now) },
		PPS:      s.pps,
		Duration: s.duration,
		Bytes:    s.bytes,
		FirstID:  layout.FirstID(),
		Dst:      dst,
		Batch:    s.batch,
	}, c)
}

// finOutcome is what the end-of-test exchange produced.
type finOutcome struct {
	report  *i2wire.ServerReport
	layout  i2wire.Layout
	fins    int
	elapsed time.Duration
	echoes  int
}

// finish sends the FIN datagrams and, unless the style says no report
// comes, waits for the server report. dataSent is how many data datagrams
// went out. It never takes longer than about 2.5 s.
func (s *udpStream) finish(ctx context.Context, conn udpio.Conn, dst netip.AddrPort, tmpl []byte, dataSent int64) (finOutcome, error) {
	fin := append([]byte(nil), tmpl...)
	tries, wait := 201, 10*time.Millisecond
	switch s.fin {
	case finLegacy:
		tries, wait = 10, 250*time.Millisecond
	case finReverse:
		tries = 1
	}
	check := i2wire.EchoCheck{Layout: s.layout, Header: s.header}
	msgs := []udpio.Message{{Buf: make([]byte, 2048)}}
	start := time.Now()
	var out finOutcome
	for retry := 0; retry < tries && ctx.Err() == nil; retry++ {
		id := i2wire.FINID(s.layout, dataSent, retry)
		i2wire.PutDatagram(fin, s.layout, id, time.Now())
		if retry == 0 {
			check.FirstFIN = id
		}
		check.LastFIN = id
		if _, err := conn.WriteBatch([]udpio.Message{{Buf: fin, Addr: dst}}); err != nil && retry == 0 {
			return out, err
		}
		out.fins++
		if s.fin == finReverse {
			return out, nil
		}
		deadline := time.Now().Add(wait)
		for {
			_ = conn.SetReadDeadline(deadline)
			n, err := conn.ReadBatch(msgs)
			if n == 1 {
				b := msgs[0].Buf[:msgs[0].N]
				if dst.IsValid() && msgs[0].Addr != dst {
					continue // not from our server
				}
				if check.IsEcho(b) {
					out.echoes++
					continue
				}
				if len(b) == 52 && i2wire.ClientHdrAckLen(b) > 0 {
					continue
				}
				if r, l, perr := i2wire.ParseServerReport(b); perr == nil {
					out.report, out.layout, out.elapsed = &r, l, time.Since(start)
					_ = conn.SetReadDeadline(time.Time{})
					return out, nil
				}
				continue
			}
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !session.IsRefused(err) {
				_ = conn.SetReadDeadline(time.Time{})
				return out, err
			}
			if err != nil {
				break
			}
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
	out.elapsed = time.Since(start)
	return out, ctx.Err()
}
