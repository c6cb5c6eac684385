package ping

import (
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// fakeHost decides how a fake target answers each echo request.
type fakeHost struct {
	rtt       time.Duration
	maxSize   int // largest payload answered; <0 answers all
	dfMTU     int // with DF on, payloads above dfMTU-28 fail with EMSGSIZE
	corrupt   func(seq int) bool
	duplicate func(seq int) bool
	late      func(seq int) bool // reply stamped after the timeout
	lateBy    time.Duration
	wrongID   bool // answer with another identifier (someone else's ping)
	// drops, when set, is the socket's cumulative drop count reported
	// with the reply to seq.
	drops func(seq int) uint32
	from  net.IP
}

// fakeConn is a Conn whose "network" is a fakeHost answering in memory.
type fakeConn struct {
	host fakeHost
	v6   bool
	kind result.PingSocketKind
	id   int // kernel-chosen id for unprivileged sockets

	mu       sync.Mutex
	df       bool
	deadline time.Time
	q        chan Packet
	closed   chan struct{}
	once     sync.Once
}

func newFakeConn(h fakeHost, kind result.PingSocketKind, v6 bool) *fakeConn {
	return &fakeConn{host: h, kind: kind, v6: v6, id: 4242, q: make(chan Packet, 1<<16), closed: make(chan struct{})}
}

func (c *fakeConn) WriteTo(b []byte, dst net.IP) (Sent, error) {
	now := time.Now()
	sent := Sent{At: now}
	r := echoRequest(b, c.v6)
	c.mu.Lock()
	df := c.df
	c.mu.Unlock()
	if df && c.host.dfMTU > 0 && len(r.Payload) > c.host.dfMTU-28 {
		return sent, os.NewSyscallError("sendto", syscall.EMSGSIZE)
	}
	if c.kind == result.PingSocketUnprivileged {
		r.ID = c.id // the kernel rewrites the identifier
	}
	if c.host.maxSize >= 0 && len(r.Payload) > c.host.maxSize {
		return sent, nil
	}
	if c.host.wrongID {
		r.ID ^= 0x5555
	}
	payload := append([]byte(nil), r.Payload...)
	if c.host.corrupt != nil && c.host.corrupt(r.Seq) && len(payload) > 0 {
		payload[len(payload)/2] ^= 0x01
	}
	at := now.Add(c.host.rtt)
	if c.host.late != nil && c.host.late(r.Seq) {
		at = now.Add(c.host.lateBy)
	}
	reply := echoReply(c.v6, r.ID, r.Seq, payload)
	from := c.host.from
	if from == nil {
		from = dst
	}
	pkt := Packet{Data: reply, From: from, At: at, Kernel: true}
	if c.host.drops != nil {
		pkt.Drops, pkt.HasDrops = c.host.drops(r.Seq), true
	}
	c.q <- pkt
	if c.host.duplicate != nil && c.host.duplicate(r.Seq) {
		c.q <- Packet{Data: reply, From: from, At: at.Add(time.Microsecond), Kernel: true}
	}
	return sent, nil
}

// stampedConn is a fakeConn whose "kernel" stamps each send txDelay after
// the send call, except the sequence numbers unstamped refuses.
type stampedConn struct {
	*fakeConn
	txDelay   time.Duration
	unstamped func(seq int) bool
	mu        sync.Mutex
	seqs      map[time.Time]int // send time → sequence number
}

func (c *stampedConn) WriteTo(b []byte, dst net.IP) (Sent, error) {
	s, err := c.fakeConn.WriteTo(b, dst)
	c.mu.Lock()
	c.seqs[s.At] = echoRequest(b, c.v6).Seq
	c.mu.Unlock()
	return s, err
}

func (c *stampedConn) TxTime(s Sent) (time.Time, bool) {
	c.mu.Lock()
	seq := c.seqs[s.At]
	c.mu.Unlock()
	if c.unstamped != nil && c.unstamped(seq) {
		return time.Time{}, false
	}
	return s.At.Add(c.txDelay), true
}

// echoRequest parses what the pinger sent (an echo request) for the fake.
func echoRequest(b []byte, v6 bool) Reply {
	c := append([]byte(nil), b...)
	c[0] = 0 // echo reply v4
	if v6 {
		c[0] = 129
	}
	r, err := ParseReply(c, v6)
	if err != nil {
		panic(err)
	}
	return r
}

func echoReply(v6 bool, id, seq int, payload []byte) []byte {
	b, err := MarshalEcho(v6, id, seq, payload)
	if err != nil {
		panic(err)
	}
	b[0] = 0
	if v6 {
		b[0] = 129
	}
	return b
}

func (c *fakeConn) ReadPacket(buf []byte) (Packet, error) {
	got := func(p Packet) (Packet, error) {
		n := copy(buf, p.Data)
		p.Data = buf[:n]
		return p, nil
	}
	c.mu.Lock()
	dl := c.deadline
	c.mu.Unlock()
	var expired <-chan time.Time
	if !dl.IsZero() {
		select {
		case p := <-c.q:
			return got(p)
		default:
		}
		left := time.Until(dl)
		if left <= 0 {
			return Packet{}, os.ErrDeadlineExceeded
		}
		t := time.NewTimer(left)
		defer t.Stop()
		expired = t.C
	}
	select {
	case p := <-c.q:
		return got(p)
	case <-c.closed:
		return Packet{}, net.ErrClosed
	case <-expired:
		return Packet{}, os.ErrDeadlineExceeded
	}
}

func (c *fakeConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	return nil
}

func (c *fakeConn) SetDF(on bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.df = on
	return nil
}

func (c *fakeConn) Info() result.PingSocket {
	i := result.PingSocket{Kind: c.kind, Network: "fake", RxTimestamps: result.PingTimestampKernel, DF: true}
	if c.kind == result.PingSocketUnprivileged {
		i.ID = c.id
	}
	return i
}

func (c *fakeConn) Close() error {
	err := errors.New("already closed")
	c.once.Do(func() { close(c.closed); err = nil })
	return err
}

// openFake returns an OpenFunc handing out fake conns of the kinds listed
// in allowed; other kinds fail with the given error.
func openFake(h fakeHost, denied error, allowed ...result.PingSocketKind) OpenFunc {
	return func(kind result.PingSocketKind, v6 bool) (Conn, error) {
		for _, k := range allowed {
			if k == kind {
				return newFakeConn(h, kind, v6), nil
			}
		}
		return nil, denied
	}
}
