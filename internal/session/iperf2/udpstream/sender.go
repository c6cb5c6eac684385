package udpstream

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// FinStyle is how a UDP sender ends its test.
type FinStyle int

// The ways a sender ends its test.
const (
	FinModern  FinStyle = iota // FIN −(n+1), decremented every 10 ms, up to 200 retries, report awaited
	FinLegacy                  // FIN −n repeated, 10 × 250 ms, report awaited
	FinReverse                 // one negative-id datagram, no report (2.1 -R)
)

// Sender is one iperf2 UDP sending stream.
type Sender struct {
	Layout   i2wire.Layout
	Header   []byte // test header placed after the datagram header; nil for none
	Length   int
	PPS      float64
	Duration time.Duration
	Bytes    int64
	Fin      FinStyle
	// Batch is the most datagrams handed to the socket at once (0: the
	// engine's default); each is a copy of the template.
	Batch int
	// FinLen is the shortest length of the FIN datagrams: a shorter
	// template is padded (the test header placed whole, zeros after it),
	// so that the server, which sizes its report by the FIN, has room for
	// all of it (session.ClientConfig.FinLen). 0: as long as the data.
	FinLen int
}

// finTemplate is tmpl padded to FinLen: what a datagram of that length
// would carry (datagram header, the whole test header), zeros after it.
func (s *Sender) finTemplate(tmpl []byte) []byte {
	fin := append([]byte(nil), tmpl...)
	if len(fin) >= s.FinLen {
		return fin
	}
	fin = append(fin, make([]byte, s.FinLen-len(fin))...)
	if hl := s.Layout.HeaderLen(); s.Header != nil && hl < len(fin) {
		copy(fin[hl:], s.Header)
	}
	return fin
}

// Template builds the datagram every send copies: datagram header space,
// the test header, then fill's payload (offsets up to 36 zeroed when there
// is no test header, so no 2.1 server mistakes the payload for flags,
// §1.7). fill writes the payload, iperf's digit pattern
// (session.FillPattern).
func (s *Sender) Template(fill func([]byte)) []byte {
	b := make([]byte, s.Length)
	fill(b)
	hl := s.Layout.HeaderLen()
	clear(b[:min(len(b), hl)])
	if s.Header == nil {
		clear(b[hl:min(len(b), 36)])
	} else if hl < len(b) {
		copy(b[hl:], s.Header)
	}
	return b
}

// Send runs the paced send of the stream's data datagrams to dst (the
// invalid AddrPort on a connected socket), copies of tmpl, counted in c.
func (s *Sender) Send(ctx context.Context, conn udpio.Conn, dst netip.AddrPort, tmpl []byte, c *stats.Counters) (engine.UDPSendResult, error) {
	layout := s.Layout
	return engine.SendUDP(ctx, conn, engine.UDPSendConfig{
		Template: tmpl,
		Stamp:    func(b []byte, id int64, now time.Time) { i2wire.PutDatagram(b, layout, id, now) },
		PPS:      s.PPS,
		Duration: s.Duration,
		Bytes:    s.Bytes,
		FirstID:  FirstID(layout),
		Dst:      dst,
		Batch:    s.Batch,
	}, c)
}

// SendStreams runs the paced sends of several streams of this spec at once
// from the calling goroutine's one thread (engine.SendUDPStreams), each to
// its connected socket with its own copy of tmpl, counted in its counters.
func (s *Sender) SendStreams(ctx context.Context, conns []udpio.Conn, tmpl []byte, counters []*stats.Counters) ([]engine.UDPSendResult, []error) {
	layout := s.Layout
	streams := make([]engine.UDPStream, len(conns))
	for i, c := range conns {
		streams[i] = engine.UDPStream{Conn: c, Counters: counters[i], Config: engine.UDPSendConfig{
			Template: tmpl,
			Stamp:    func(b []byte, id int64, now time.Time) { i2wire.PutDatagram(b, layout, id, now) },
			PPS:      s.PPS, Duration: s.Duration, Bytes: s.Bytes, FirstID: FirstID(layout),
			Batch: s.Batch,
		}}
	}
	return engine.SendUDPStreams(ctx, streams)
}

// StreamOutcome is one stream's send and end-of-test exchange
// (RunStreams).
type StreamOutcome struct {
	Send engine.UDPSendResult
	Fin  FinOutcome
	Err  error
}

// RunStreams sends s on every conn at once, each stream ending with its
// FIN exchange, and returns what each did. The streams are sent from
// SenderThreads threads, each sending its share of them (SendStreams);
// fill writes the payload of the datagram template (Template).
func (s *Sender) RunStreams(ctx context.Context, conns []udpio.Conn, counters []*stats.Counters, fill func([]byte)) []StreamOutcome {
	outs := make([]StreamOutcome, len(conns))
	threads := SenderThreads(len(conns), conns[0].RemoteAddr().Addr(), runtime.NumCPU())
	var wg sync.WaitGroup
	for g := range threads {
		var idx []int
		for i := g; i < len(conns); i += threads {
			idx = append(idx, i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tmpl := s.Template(fill)
			cs, cn := make([]udpio.Conn, len(idx)), make([]*stats.Counters, len(idx))
			for k, i := range idx {
				cs[k], cn[k] = conns[i], counters[i]
			}
			sends, errs := s.SendStreams(ctx, cs, tmpl, cn)
			// An interrupt (ctx done) ends the sends; each test still
			// ends the proper way: FINs and the report, bounded by
			// Finish itself, the streams' at once.
			var fins sync.WaitGroup
			for k, i := range idx {
				o := &outs[i]
				o.Send, o.Err = sends[k], errs[k]
				if o.Err != nil {
					continue
				}
				fins.Add(1)
				go func() {
					defer fins.Done()
					var err error
					o.Fin, err = s.Finish(context.WithoutCancel(ctx), conns[i], netip.AddrPort{}, tmpl, o.Send.Packets)
					if o.Err == nil {
						o.Err = err
					}
				}()
			}
			fins.Wait()
		}()
	}
	wg.Wait()
	return outs
}

// SenderThreads is how many threads send a test's n UDP streams to peer
// on a host of cpus cores: one per stream, up to one per core, and when
// the peer is this host (loopback), whose receivers need the other half of
// its cores, up to half of them. Each thread costs a wake-up per batch, so
// streams that share a thread cost what one stream of their summed rate
// would: on two cores, two streams each on its own thread took more CPU
// than one stream of their summed rate and left the receivers short of
// it.
func SenderThreads(n int, peer netip.Addr, cpus int) int {
	if peer.Unmap().IsLoopback() {
		cpus /= 2
	}
	return max(1, min(n, cpus))
}

// FinOutcome is what the end-of-test exchange produced.
type FinOutcome struct {
	Report  *i2wire.ServerReport // the server's report; nil when none came
	Layout  i2wire.Layout        // the report's layout
	FINs    int                  // FIN datagrams sent
	Elapsed time.Duration        // from the first FIN to the report (or the giving up)
	Echoes  int                  // our own FINs that came back (a reflector, not a server)
}

// Finish sends the FIN datagrams and, unless the style says no report
// comes, waits for the server report. dataSent is how many data datagrams
// went out. It never takes longer than about 2.5 s.
func (s *Sender) Finish(ctx context.Context, conn udpio.Conn, dst netip.AddrPort, tmpl []byte, dataSent int64) (FinOutcome, error) {
	fin := s.finTemplate(tmpl)
	tries, wait := 201, 10*time.Millisecond
	switch s.Fin {
	case FinLegacy:
		tries, wait = 10, 250*time.Millisecond
	case FinReverse:
		tries = 1
	}
	check := i2wire.EchoCheck{Layout: s.Layout, Header: s.Header}
	msgs := []udpio.Message{{Buf: make([]byte, 2048)}}
	start := time.Now()
	var out FinOutcome
	for retry := 0; retry < tries && ctx.Err() == nil; retry++ {
		id := finID(s.Layout, dataSent, retry)
		i2wire.PutDatagram(fin, s.Layout, id, time.Now())
		if retry == 0 {
			check.FirstFIN = id
		}
		check.LastFIN = id
		if _, err := conn.WriteBatch([]udpio.Message{{Buf: fin, Addr: dst}}); err != nil && retry == 0 {
			return out, err
		}
		out.FINs++
		if s.Fin == FinReverse {
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
					out.Echoes++
					continue
				}
				if len(b) == 52 && i2wire.ClientHdrAckLen(b) > 0 {
					continue
				}
				if r, l, perr := i2wire.ParseServerReport(b); perr == nil {
					out.Report, out.Layout, out.Elapsed = &r, l, time.Since(start)
					_ = conn.SetReadDeadline(time.Time{})
					return out, nil
				}
				continue
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				// One of our FINs met a closed port: a one-shot server
				// that sent its report and stopped. The kernel says so
				// once, on this read, ahead of a report already queued:
				// read on. Sending the next FIN at once instead met the
				// closed port again, and every later read said so too,
				// so the report was never read.
				continue
			}
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				_ = conn.SetReadDeadline(time.Time{})
				return out, err
			}
			if err != nil {
				break
			}
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
	out.Elapsed = time.Since(start)
	return out, ctx.Err()
}
