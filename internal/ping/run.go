package ping

import (
	"context"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// Options says what to send.
type Options struct {
	Sizes    []int
	Count    int
	Interval time.Duration
	Timeout  time.Duration
	DF       bool
	// MTU is the path MTU used to count fragments; 0 asks the route.
	MTU int
	// TTL is the time-to-live (IPv6: hop limit) of the probes; 0 leaves
	// the system's default.
	TTL int
	// OnOpen, when set, is called once the socket is open and set up,
	// before the first echo request.
	OnOpen func(result.PingSocket)
}

// Run pings cfg.Target with every size in o.Sizes, o.Count probes each.
// The error is non-nil only when nothing could be measured (no socket, DF
// not supported); an interrupted run returns its partial figures with
// result.PingRun.Error set.
func Run(ctx context.Context, target string, cfg Config, o Options) (*result.PingRun, error) {
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if err := p.SetDF(o.DF); err != nil {
		return nil, err
	}
	if o.TTL > 0 {
		if err := p.SetTTL(o.TTL); err != nil {
			return nil, err
		}
	}
	if o.OnOpen != nil {
		o.OnOpen(p.Info())
	}
	res := p.newResult(target, o.MTU)
	res.DF, res.Count = o.DF, o.Count
	res.Interval, res.Timeout = o.Interval.Seconds(), o.Timeout.Seconds()
	for _, size := range o.Sizes {
		sr, err := p.PingSize(ctx, size, o.Count, o.Interval, o.Timeout)
		if res.PathMTU > 0 {
			sr.Fragments = Fragments(size, res.PathMTU, p.v6)
		}
		res.Sizes = append(res.Sizes, sr)
		if err != nil {
			res.Error = err.Error()
			break
		}
	}
	p.drain()
	for _, sr := range res.Sizes {
		finish(sr) // replies to earlier sizes may have come in since
	}
	return res, nil
}

func (p *Pinger) newResult(target string, mtu int) *result.PingRun {
	if mtu <= 0 {
		mtu = p.pathMTU()
	}
	return &result.PingRun{Target: target, Address: p.cfg.Target, Socket: p.Info(), ID: p.ID(),
		PathMTU: mtu, StartedAt: time.Now()}
}

// ReassemblyResult is what the reassembly probe found, without and with
// don't-fragment: a result.Reassembly, with its document and text here.
type ReassemblyResult result.Reassembly

// ProbeLadder is the ladder the reassembly probe climbs: a small echo
// first (does the host answer at all?), then the fragment boundaries.
func ProbeLadder(mtu int, v6 bool) []int {
	return append([]int{56}, Ladder(mtu, v6)...)
}

// Reassembly searches for the largest payload the target answers, first
// without and then with don't-fragment. Each size is tried up to tries
// times, waiting timeout for each reply.
func Reassembly(ctx context.Context, target string, cfg Config, mtu, tries int, timeout time.Duration) (*ReassemblyResult, error) {
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	base := p.newResult(target, mtu)
	if base.PathMTU <= 0 {
		base.PathMTU = 1500
	}
	res := &ReassemblyResult{Target: target, Address: cfg.Target, Socket: base.Socket, PathMTU: base.PathMTU,
		Tries: tries, Timeout: timeout.Seconds()}
	ladder := ProbeLadder(base.PathMTU, p.v6)
	try := func(ctx context.Context, size int) Verdict { return p.Try(ctx, size, timeout) }
	if err := p.SetDF(false); err != nil {
		return nil, err
	}
	res.WithoutDF = Search(ctx, ladder, tries, try)
	if ctx.Err() != nil {
		res.Error = fmt.Sprintf("interrupted: %v", ctx.Err())
		return res, nil
	}
	if err := p.SetDF(true); err != nil {
		res.DFError = err.Error()
		return res, nil
	}
	withDF := Search(ctx, ladder, tries, try)
	res.WithDF = &withDF
	if ctx.Err() != nil {
		res.Error = fmt.Sprintf("interrupted: %v", ctx.Err())
	}
	return res, nil
}
