package ping

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// PingSize sends count echo requests of size payload bytes, one every
// interval, and waits up to timeout after each for its reply. It returns
// when every probe is answered or failed, or the last one's timeout has
// passed, or ctx ends (the result then holds what was measured so far).
// Replies to probes of earlier calls still count there (as late or
// duplicate) when they arrive during this call.
func (p *Pinger) PingSize(ctx context.Context, size, count int, interval, timeout time.Duration) (*result.PingSize, error) {
	res := &result.PingSize{Size: size}
	if size < 0 || size > MaxPayload(p.v6) {
		return res, fmt.Errorf("ping size %d: want 0 to %d bytes", size, MaxPayload(p.v6))
	}
	// Take what came while nobody read (replies to earlier probes, other
	// ICMP traffic) before sending.
	p.drain()
	p.dropsCur = res
	defer func() { p.dropsCur = nil }()
	var open []*probe
	next := time.Now()
	var lastDeadline time.Time
	for {
		now := time.Now()
		if res.Sent < count && !now.Before(next) {
			pr := p.send(size, timeout, res)
			open = append(open, pr)
			lastDeadline = pr.deadline
			next = next.Add(interval)
			continue
		}
		open = stillOpen(open, now)
		if res.Sent == count && len(open) == 0 {
			break
		}
		wake := next
		if res.Sent == count {
			if !now.Before(lastDeadline) {
				break
			}
			wake = lastDeadline
		}
		if _, err := p.readOne(ctx, wake); err != nil {
			finish(res)
			return res, err
		}
		if ctx.Err() != nil {
			finish(res)
			return res, ctx.Err()
		}
	}
	p.drain()
	finish(res)
	return res, nil
}

// stillOpen keeps the probes still awaiting a reply at now.
func stillOpen(open []*probe, now time.Time) []*probe {
	out := open[:0]
	for _, pr := range open {
		if !pr.closed && !now.After(pr.deadline) {
			out = append(out, pr)
		}
	}
	return out
}

// drainMax bounds one drain: a raw socket also sees every other pinger's
// replies, which could otherwise keep it reading.
const drainMax = 4096

// drain handles the messages already queued without waiting, up to
// drainMax of them.
func (p *Pinger) drain() {
	for range drainMax {
		if ok, err := p.readOne(context.Background(), time.Now()); !ok || err != nil {
			return
		}
	}
}

func (p *Pinger) send(size int, timeout time.Duration, res *result.PingSize) *probe {
	seq := p.seq & 0xffff
	p.seq++
	pr := &probe{seq: seq, size: size, res: res}
	b, err := MarshalEcho(p.v6, p.tr.id, seq, Payload(seq, size))
	res.Sent++
	if err == nil {
		pr.tx, err = p.conn.WriteTo(b, p.cfg.Target)
	}
	pr.deadline = pr.tx.At.Add(timeout)
	p.tr.add(pr)
	if err == nil {
		return pr
	}
	pr.closed = true
	if errors.Is(err, syscall.EMSGSIZE) {
		res.TooBig++
		res.PathMTU = p.pathMTU()
		p.emit(Event{Outcome: OutcomeTooBig, Seq: seq, Size: size, PathMTU: res.PathMTU})
		return pr
	}
	res.SendErrors++
	if res.Error == "" {
		res.Error = err.Error()
	}
	p.emit(Event{Outcome: OutcomeSendError, Seq: seq, Size: size, Err: err})
	return pr
}

// pathMTU is the path MTU towards the target, looked up once.
func (p *Pinger) pathMTU() int {
	if p.mtu > 0 {
		return p.mtu
	}
	find := p.cfg.PathMTU
	if find == nil {
		find = RouteMTU
	}
	if mtu, err := find(p.cfg.Target); err == nil {
		p.mtu = mtu
	}
	return p.mtu
}

// handle counts a parsed message read at the time at (from the kernel
// when kernel is set).
func (p *Pinger) handle(reply Reply, from net.IP, at time.Time, kernel bool) {
	o, pr := p.tr.match(reply, from, at)
	if pr == nil {
		return
	}
	ev := Event{Outcome: o, Seq: pr.seq, Size: pr.size, From: from, Kernel: kernel}
	var rtt time.Duration
	if o == OutcomeReply || o == OutcomeLate || o == OutcomeDuplicate {
		rtt, ev.KernelTx = p.rtt(pr, at)
		ev.CallRTT = at.Sub(pr.tx.At)
	}
	r := pr.res
	switch o {
	case OutcomeReply:
		r.Received++
		r.Samples = append(r.Samples, rtt)
		if ev.KernelTx {
			r.KernelTx++
		}
		ev.RTT = rtt
	case OutcomeLate:
		r.Late++
		ev.RTT = rtt
	case OutcomeDuplicate:
		r.Duplicates++
		ev.RTT = rtt
	case OutcomeCorrupt:
		r.Corrupt++
	case OutcomeTooBig:
		r.TooBig++
		r.PathMTU, ev.PathMTU = reply.MTU, reply.MTU
	case OutcomeUnreachable:
		r.Unreachable++
	}
	p.emit(ev)
}

// rtt is the round-trip time of pr answered at at: from the kernel's
// transmit timestamp when there is one (kernelTx), else from the time taken
// right before the send call. A duplicate finds the timestamp taken by the
// first reply and uses the send call's time.
func (p *Pinger) rtt(pr *probe, at time.Time) (d time.Duration, kernelTx bool) {
	if !pr.txAt.IsZero() {
		return at.Sub(pr.txAt), true
	}
	if ts, ok := p.conn.(TxStamper); ok {
		if t, ok := ts.TxTime(pr.tx); ok {
			pr.txAt = t
			return at.Sub(t), true
		}
	}
	return at.Sub(pr.tx.At), false
}

func (p *Pinger) emit(ev Event) {
	if p.cfg.OnEvent != nil {
		p.cfg.OnEvent(ev)
	}
}

// Try sends one probe of size bytes and waits up to timeout for its
// reply; it is a TryFunc for Search once timeout is bound.
func (p *Pinger) Try(ctx context.Context, size int, timeout time.Duration) Verdict {
	r, err := p.PingSize(ctx, size, 1, 0, timeout)
	switch {
	case r.Received > 0:
		return Verdict{Answered: true}
	case r.TooBig > 0:
		return Verdict{Reason: result.PingNeedsFragmentation(r.PathMTU), Final: true}
	case err != nil:
		return Verdict{Reason: err.Error()}
	case r.Corrupt > 0:
		return Verdict{Reason: "reply corrupted"}
	case r.Late > 0:
		return Verdict{Reason: fmt.Sprintf("reply later than %v", timeout)}
	case r.Unreachable > 0:
		return Verdict{Reason: "unreachable"}
	case r.SendErrors > 0:
		return Verdict{Reason: r.Error}
	}
	return Verdict{Reason: fmt.Sprintf("no reply within %v", timeout)}
}
