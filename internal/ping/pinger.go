package ping

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// Config says how to reach the target.
type Config struct {
	Target net.IP
	Socket result.PingSocketKind // result.PingSocketAuto tries raw, then unprivileged
	// Open opens the socket; nil means OpenSystemFrom with Source.
	Open OpenFunc
	// Source binds the socket to an address of this host or to an
	// interface, by name (like ping -I); "" binds to neither. Only used
	// when Open is nil.
	Source string
	// PathMTU finds the path MTU to report with EMSGSIZE; nil means
	// RouteMTU.
	PathMTU func(net.IP) (int, error)
	// ID is the echo identifier for raw sockets; 0 picks one at random.
	ID int
	// OnEvent, when set, is called with each probe's outcome, from the
	// goroutine that called PingSize.
	OnEvent func(Event)
}

// Pinger sends echo requests on one socket and matches replies. Its
// methods must be called from one goroutine, which also reads the replies:
// no other thread waits on the socket, so the kernel wakes nobody while it
// sends (a waiting reader costs the send path a wake-up for every
// timestamp, about 10 µs of a 65 KB echo's round trip on loopback).
type Pinger struct {
	cfg  Config
	conn Conn
	v6   bool
	tr   *tracker
	seq  int
	buf  []byte
	df   bool
	mtu  int // cached path MTU, 0 = not yet known

	drops    uint32           // the socket's drop count when last read
	dropsCur *result.PingSize // where new drops are counted
}

// readSlice bounds one wait for a reply, so that a cancelled context is
// noticed within it.
const readSlice = 100 * time.Millisecond

// New opens a socket for cfg.Target. Close releases it.
func New(cfg Config) (*Pinger, error) {
	if cfg.Target == nil {
		return nil, errors.New("starting ping: no target address")
	}
	v6 := cfg.Target.To4() == nil
	open := cfg.Open
	if open == nil && cfg.Source != "" {
		open = func(kind result.PingSocketKind, v6 bool) (Conn, error) { return OpenSystemFrom(kind, v6, cfg.Source) }
	}
	conn, err := Open(cfg.Socket, v6, open)
	if err != nil {
		return nil, err
	}
	id := conn.Info().ID
	if conn.Info().Kind == result.PingSocketRaw || id == 0 {
		id = cfg.ID
		if id == 0 {
			id = 1 + rand.IntN(0xfffe)
		}
	}
	p := &Pinger{cfg: cfg, conn: conn, v6: v6, tr: newTracker(id, cfg.Target),
		buf: make([]byte, 65536+512), seq: 1} // sequence numbers from 1, as ping counts
	return p, nil
}

// Info describes the socket in use.
func (p *Pinger) Info() result.PingSocket { return p.conn.Info() }

// ID is the echo identifier our requests carry.
func (p *Pinger) ID() int { return p.tr.id }

// Close closes the socket.
func (p *Pinger) Close() error { return p.conn.Close() }

// SetTTL sets the time-to-live (hop limit for IPv6) of the probes that
// follow; it returns an error matching ErrNotSupported where the socket
// cannot.
func (p *Pinger) SetTTL(ttl int) error {
	if ttl < 1 || ttl > 255 {
		return fmt.Errorf("TTL %d out of range 1-255", ttl)
	}
	ts, ok := p.conn.(TTLSetter)
	if !ok {
		return fmt.Errorf("setting the TTL: %w", ErrNotSupported)
	}
	if err := ts.SetTTL(ttl); err != nil {
		return fmt.Errorf("setting the TTL to %d: %w", ttl, err)
	}
	return nil
}

// SetDF turns don't-fragment on or off for the probes that follow.
func (p *Pinger) SetDF(on bool) error {
	if err := p.conn.SetDF(on); err != nil {
		return fmt.Errorf("setting don't-fragment %v: %w", on, err)
	}
	p.df = on
	return nil
}

// readOne waits until the time until for one message and handles it.
// It returns false, nil when until has come (or ctx has ended: the caller
// looks) without a message; an error only when the socket failed. A
// message already queued is read even when until has passed.
func (p *Pinger) readOne(ctx context.Context, until time.Time) (bool, error) {
	for {
		dl := until
		if slice := time.Now().Add(readSlice); dl.After(slice) {
			dl = slice
		}
		if err := p.conn.SetReadDeadline(dl); err != nil {
			return false, fmt.Errorf("reading replies: %w", err)
		}
		pkt, err := p.conn.ReadPacket(p.buf)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			if ctx.Err() != nil || !time.Now().Before(until) {
				return false, nil
			}
			continue
		case err != nil && softReadError(err):
			if !time.Now().Before(until) {
				return false, nil
			}
			continue
		case err != nil:
			return false, fmt.Errorf("reading replies: %w", err)
		}
		p.countDrops(pkt)
		var r Reply
		if pkt.Reply != nil {
			r = *pkt.Reply
		} else if r, err = ParseReply(pkt.Data, p.v6); err != nil || r.Kind == KindOther {
			// Not ours to count; a stream of such messages must not
			// keep the caller from its next send.
			if !time.Now().Before(until) {
				return false, nil
			}
			continue
		}
		p.handle(r, pkt.From, pkt.At, pkt.Kernel)
		return true, nil
	}
}

// countDrops charges what the socket dropped since the last message to the
// size being measured.
func (p *Pinger) countDrops(pkt Packet) {
	if !pkt.HasDrops || pkt.Drops == p.drops {
		return
	}
	if p.dropsCur != nil {
		p.dropsCur.SocketDrops += int(pkt.Drops - p.drops)
	}
	p.drops = pkt.Drops
}

// softReadError is an error a socket reports on read for an earlier ICMP
// error or a local refusal; reading goes on after it.
func softReadError(err error) bool {
	for _, e := range []error{syscall.EMSGSIZE, syscall.EHOSTUNREACH, syscall.ENETUNREACH,
		syscall.ECONNREFUSED, syscall.EAGAIN, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
