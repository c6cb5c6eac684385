package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/udpio"
)

// RelayConfig configures a relay.
type RelayConfig struct {
	// Listen is where clients send (ADDR:PORT); To is the target.
	Listen, To string
	// Model is applied to client → target datagrams, and with Both to the
	// replies as well. ModelText is how it was written, for the report.
	Model     model.Spec
	ModelText string
	Both      bool
	// TCP also proxies TCP connections on the same address and port to the
	// target, with the model's delay and rate (nothing else of the model
	// applies to a byte stream).
	TCP bool
	// IdleFlow is how long a client source may stay silent (both ways)
	// before its upstream socket is closed (0: 2 minutes).
	IdleFlow time.Duration
	// MaxFlows bounds the client sources served at once (0: 1024); a new
	// source beyond it is dropped and counted.
	MaxFlows int
	// OnLog receives one line per notable event (may be nil).
	OnLog func(string)
}

// sockOpts are the socket options of the upstream sockets, and lnOpts of
// the listening socket (and the reflector's): receive buffers that ride out
// the reader being descheduled for a while on a loaded host at 100k
// datagrams/s (a 64-byte datagram takes about 768 bytes of buffer).
var (
	sockOpts = udpio.Options{ReadBuffer: 4 << 20, WriteBuffer: 4 << 20}
	lnOpts   = udpio.Options{ReadBuffer: 16 << 20, WriteBuffer: 4 << 20}
)

// Relay is a running UDP relay.
type Relay struct {
	cfg  RelayConfig
	seed uint64
	ln   udpio.Conn

	fwd, rev *pipe
	tcp      *tcpProxy
	start    time.Time

	mu        sync.Mutex // guards flows, opened, refused, upErrors, upDropped, upUncounted
	flows     map[netip.AddrPort]*flow
	opened    int
	refused   int64
	upErrors  []string
	upDropped uint64
	// upUncounted: an upstream socket could not say what the kernel dropped.
	upUncounted bool
}

// addUpDrops adds what the kernel dropped at an upstream socket to total.
// Called with mu held.
func (r *Relay) addUpDrops(total *uint64, up udpio.Conn) {
	if d, ok := up.Drops(); ok {
		*total += d
	} else {
		r.upUncounted = true
	}
}

// flow is one client source and its own upstream socket.
type flow struct {
	client   netip.AddrPort
	up       udpio.Conn
	fwd, rev seqState
	last     atomic.Int64 // time of the latest datagram either way, Unix ns
}

// NewRelay binds the listening socket (so Addr is known before Run).
func NewRelay(ctx context.Context, cfg RelayConfig) (*Relay, error) {
	if cfg.MaxFlows <= 0 {
		cfg.MaxFlows = 1024
	}
	if cfg.IdleFlow <= 0 {
		cfg.IdleFlow = 2 * time.Minute
	}
	if _, _, err := net.SplitHostPort(cfg.To); err != nil {
		return nil, fmt.Errorf("relay target %q: want HOST:PORT: %w", cfg.To, err)
	}
	ln, err := udpio.Listen(ctx, "udp", cfg.Listen, lnOpts)
	if err != nil {
		return nil, fmt.Errorf("relay: listening on %s: %w", cfg.Listen, err)
	}
	r := &Relay{cfg: cfg, seed: seedFor(cfg.Model), ln: ln, flows: map[netip.AddrPort]*flow{}, start: time.Now()}
	r.fwd = newPipe(r.start, cfg.Model, r.seed)
	var back model.Spec
	if cfg.Both {
		back = cfg.Model
	}
	r.rev = newPipe(r.start, back, r.seed+1)
	if cfg.TCP {
		var lc net.ListenConfig
		tl, err := lc.Listen(ctx, "tcp", ln.LocalAddr().String())
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("relay: listening for TCP on %s: %w", ln.LocalAddr(), err)
		}
		r.tcp = &tcpProxy{ln: tl, to: cfg.To, delay: cfg.Model.Delay, rate: cfg.Model.Rate, onLog: r.log}
	}
	return r, nil
}

// Addr is the listening address.
func (r *Relay) Addr() netip.AddrPort { return r.ln.LocalAddr() }

// Seed is the seed the model's fates are drawn from.
func (r *Relay) Seed() uint64 { return r.seed }

// Run relays until ctx ends, then sends what the model still holds, closes
// every socket and returns the report.
func (r *Relay) Run(ctx context.Context) (Report, error) {
	var wg sync.WaitGroup
	sendCtx, stopSend := context.WithCancel(context.Background())
	for _, p := range []*pipe{r.fwd, r.rev} {
		wg.Add(1)
		go func() { defer wg.Done(); p.run(sendCtx) }()
	}
	if r.tcp != nil {
		wg.Add(1)
		go func() { defer wg.Done(); r.tcp.serve(ctx) }()
	}
	readErr := make(chan error, 1)
	var readers sync.WaitGroup
	readers.Add(1)
	go func() { defer readers.Done(); readErr <- r.readClients(ctx, &readers) }()
	<-ctx.Done()
	_ = r.ln.SetReadDeadline(time.Now())
	err := <-readErr
	r.mu.Lock()
	for _, f := range r.flows {
		_ = f.up.SetReadDeadline(time.Now())
	}
	r.mu.Unlock()
	readers.Wait()
	stopSend()
	wg.Wait()
	return r.report(), errors.Join(err, r.close())
}

// readClients reads what clients send and pushes it into the forward
// pipe, opening an upstream socket for each new source.
func (r *Relay) readClients(ctx context.Context, readers *sync.WaitGroup) error {
	msgs := make([]udpio.Message, udpio.DefaultBatchSize)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 65536)
	}
	reaped := time.Now()
	// last is the flow of the latest datagram: a run of datagrams from one
	// source (the usual batch) takes the flows lock once, not per datagram.
	// Only this goroutine reaps, so it stays open until the next reap.
	var last *flow
	for {
		// Wake now and then to close idle flows; check ctx after setting the
		// deadline, so the one Run sets at the end is never overwritten.
		_ = r.ln.SetReadDeadline(time.Now().Add(r.cfg.IdleFlow / 4))
		if ctx.Err() != nil {
			return nil
		}
		n, err := r.ln.ReadBatch(msgs)
		now := time.Now()
		if now.Sub(reaped) >= r.cfg.IdleFlow/4 {
			r.reap(now)
			reaped, last = now, nil
		}
		for _, m := range msgs[:n] {
			f := last
			if f == nil || f.client != m.Addr {
				if f = r.flowFor(ctx, m.Addr, readers); f == nil {
					continue
				}
				last = f
			}
			f.last.Store(now.UnixNano())
			r.fwd.push(m.Buf[:m.N], m.Time, f.up, netip.AddrPort{}, &f.fwd)
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			// An ICMP error for an earlier reply to a client: the socket stays usable.
			r.log(fmt.Sprintf("relay: reading from clients: %v", err))
			continue
		}
	}
}

// flowFor returns the flow of a client source, opening it when new; nil
// when it cannot be opened.
func (r *Relay) flowFor(ctx context.Context, src netip.AddrPort, readers *sync.WaitGroup) *flow {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.flows[src]; ok {
		return f
	}
	if len(r.flows) >= r.cfg.MaxFlows {
		r.refused++
		return nil
	}
	up, err := udpio.Dial(ctx, "udp", r.cfg.To, "", sockOpts)
	if err != nil {
		r.refused++
		if len(r.upErrors) < 5 {
			r.upErrors = append(r.upErrors, fmt.Sprintf("opening an upstream socket to %s for %s: %v", r.cfg.To, src, err))
		}
		return nil
	}
	f := &flow{client: src, up: up}
	f.fwd.countFIN = true // the test's FIN is a datagram of its own (pipe.push)
	f.last.Store(time.Now().UnixNano())
	r.flows[src] = f
	r.opened++
	r.log(fmt.Sprintf("relay: %s -> %s via %s", src, r.cfg.To, up.LocalAddr()))
	readers.Add(1)
	go func() { defer readers.Done(); r.readTarget(ctx, f) }()
	return f
}

// readTarget reads the target's replies to one client and pushes them into
// the reverse pipe, addressed to the client from the listening socket.
func (r *Relay) readTarget(ctx context.Context, f *flow) {
	msgs := make([]udpio.Message, 16)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 65536)
	}
	for ctx.Err() == nil {
		n, err := f.up.ReadBatch(msgs)
		if n > 0 {
			f.last.Store(time.Now().UnixNano())
		}
		for _, m := range msgs[:n] {
			r.rev.push(m.Buf[:m.N], m.Time, r.ln, f.client, &f.rev)
		}
		if err != nil && (errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil) {
			return
		}
	}
}

// reap closes the upstream sockets of flows silent for IdleFlow; a later
// datagram from the same source opens a new one.
func (r *Relay) reap(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for src, f := range r.flows {
		if now.Sub(time.Unix(0, f.last.Load())) < r.cfg.IdleFlow {
			continue
		}
		r.addUpDrops(&r.upDropped, f.up)
		_ = f.up.Close()
		delete(r.flows, src)
		r.log(fmt.Sprintf("relay: %s idle for %v: upstream socket closed", src, r.cfg.IdleFlow))
	}
}

func (r *Relay) log(s string) {
	if r.cfg.OnLog != nil {
		r.cfg.OnLog(s)
	}
}

func (r *Relay) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, f := range r.flows {
		r.addUpDrops(&r.upDropped, f.up)
		errs = append(errs, f.up.Close())
	}
	return errors.Join(append(errs, r.ln.Close())...)
}

// Counts returns the forward and reverse counters so far.
func (r *Relay) Counts() (fwd, rev Counts) { return r.fwd.snapshot(), r.rev.snapshot() }

func (r *Relay) report() Report {
	rep := newReport("relay", r.ln.LocalAddr().String(), r.cfg.ModelText, r.seed, r.start)
	rep.To, rep.Both = r.cfg.To, r.cfg.Both
	fwd, rev := r.Counts()
	rep.Datagrams, rep.Data, rep.Reverse = fwd, fwd.Data, &rev
	if r.tcp != nil {
		rep.TCP = r.tcp.snapshot()
	}
	lnDrops, lnKnown := r.ln.Drops()
	r.mu.Lock()
	rep.Flows = r.opened
	upDrops := r.upDropped
	for _, f := range r.flows {
		r.addUpDrops(&upDrops, f.up)
	}
	if r.refused > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d datagrams from new client sources were dropped: no upstream socket (limit %d sources, or it could not be opened)", r.refused, r.cfg.MaxFlows))
	}
	rep.Warnings = append(rep.Warnings, r.upErrors...)
	upKnown := !r.upUncounted
	r.mu.Unlock()
	rep.warn("forward", fwd, lnDrops, lnKnown)
	rep.warn("reverse", rev, upDrops, upKnown)
	return rep
}
