package lab

import (
	"context"
	"errors"
	"fmt"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/udpio"
)

// Reflector sends every datagram back to its sender unchanged (unless the
// model says otherwise).
type Reflector struct {
	ln        udpio.Conn
	p         *pipe
	seed      uint64
	modelText string
	start     time.Time

	// seqs is only touched by Run's reading goroutine: no lock.
	seqs  map[netip.AddrPort]*seqState
	limit int
	// untracked counts datagrams from sources past limit, whose
	// reordering is not counted.
	untracked int64
}

// NewReflector binds addr ("[ADDR]:PORT") and applies spec to what it
// reflects; text is the model as written, for the report.
func NewReflector(ctx context.Context, addr string, spec model.Spec, text string) (*Reflector, error) {
	ln, err := udpio.Listen(ctx, "udp", addr, lnOpts)
	if err != nil {
		return nil, fmt.Errorf("reflect: listening on %s: %w", addr, err)
	}
	f := &Reflector{ln: ln, seed: seedFor(spec), modelText: text, start: time.Now(), seqs: map[netip.AddrPort]*seqState{}, limit: 4096}
	f.p = newPipe(f.start, spec, f.seed)
	return f, nil
}

// Addr is the bound address.
func (f *Reflector) Addr() netip.AddrPort { return f.ln.LocalAddr() }

// Run reflects until ctx ends and returns the report.
func (f *Reflector) Run(ctx context.Context) (Report, error) {
	sendCtx, stopSend := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.p.run(sendCtx) }()
	stop := context.AfterFunc(ctx, func() { _ = f.ln.SetReadDeadline(time.Now()) })
	defer stop()
	msgs := make([]udpio.Message, udpio.DefaultBatchSize)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 65536)
	}
	var readErr error
	for ctx.Err() == nil {
		n, err := f.ln.ReadBatch(msgs)
		for _, m := range msgs[:n] {
			f.p.push(m.Buf[:m.N], m.Time, f.ln, m.Addr, f.flowFor(m.Addr, m.Buf[:m.N]))
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			if errors.Is(err, net.ErrClosed) {
				readErr = err
				break
			}
			// An ICMP error for an earlier reflection; the socket stays usable.
		}
	}
	stopSend()
	<-done
	rep := newReport("reflect", f.ln.LocalAddr().String(), f.modelText, f.seed, f.start)
	rep.Datagrams = f.p.snapshot()
	rep.Data = rep.Datagrams.Data
	drops, known := f.ln.Drops()
	rep.warn("reflect", rep.Datagrams, drops, known)
	if f.untracked > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("reflect: %d datagrams came from sources past the %d tracked: their reordering is not counted in data.reordered", f.untracked, f.limit))
	}
	return rep, errors.Join(readErr, f.ln.Close())
}

// seqFor returns the reordering state of a source (nil past the limit of
// sources tracked: its reordering is then not counted).
func (f *Reflector) seqFor(a netip.AddrPort) *seqState {
	s, ok := f.seqs[a]
	if !ok {
		if len(f.seqs) >= f.limit {
			f.untracked++
			return nil
		}
		s = &seqState{}
		f.seqs[a] = s
	}
	return s
}

// flowFor returns the reordering state of the flow b, from a, belongs to:
// a datagram that starts a test (iperf 2 id 0 or 1, the first of either
// layout) after the source sent more than a reordering could put ahead of
// it starts a new flow. A sweep or RFC 2544 run opens a socket per trial,
// and over hundreds of trials the kernel hands out a source port again:
// without this, the later trial's ids, below the earlier one's, were
// counted as reordered (thousands, behind a model that reorders nothing).
func (f *Reflector) flowFor(a netip.AddrPort, b []byte) *seqState {
	s := f.seqFor(a)
	if s == nil {
		return nil
	}
	id, _, _, ok := iperf2.ParseDatagram(b, iperf2.LayoutLegacy, false)
	if ok && id >= 0 && id <= 1 && s.arrived > newFlowAfter {
		s = &seqState{}
		f.seqs[a] = s
	}
	if ok && id > s.arrived {
		s.arrived = id
	}
	return s
}

// newFlowAfter is the highest id a flow may have sent before a datagram
// with the first id counts as a new test's rather than as reordered: the
// first datagram of a test overtaken by 64 of its successors on the way to
// the reflector (the model's own reordering is on the way back, counted
// where it leaves) is no path's doing.
const newFlowAfter = 64

// Seed is the seed the model's fates are drawn from.
func (f *Reflector) Seed() uint64 { return f.seed }
