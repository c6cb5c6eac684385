package ping

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"time"
)

// Config says how to reach the target.
type Config struct {
	Target net.IP
	Socket SocketKind // SocketAuto tries raw, then unprivileged
	// Open opens the socket; nil means OpenSystem.
	Open OpenFunc
	// PathMTU finds the path MTU to report with EMSGSIZE; nil means
	// RouteMTU.
	PathMTU func(net.IP) (int, error)
	// ID is the echo identifier for raw sockets; 0 picks one at random.
	ID int
	// OnEvent, when set, is called with each probe's outcome, from the
	// goroutine that called PingSize.
	OnEvent func(Event)
}

// incoming is one parsed message handed from the reader goroutine.
type incoming struct {
	reply  Reply
	from   net.IP
	at     time.Time
	kernel bool
	err    error
}

// Pinger sends echo requests on one socket and matches replies. Its
// methods must be called from one goroutine.
type Pinger struct {
	cfg    Config
	conn   Conn
	v6     bool
	tr     *tracker
	seq    int
	in     chan incoming
	done   chan struct{}
	wg     sync.WaitGroup
	df     bool
	mtu    int // cached path MTU, 0 = not yet known
	readEr error
}

// New opens a socket for cfg.Target and starts reading replies. Close
// releases it.
func New(cfg Config) (*Pinger, error) {
	if cfg.Target == nil {
		return nil, errors.New("starting ping: no target address")
	}
	v6 := cfg.Target.To4() == nil
	conn, err := Open(cfg.Socket, v6, cfg.Open)
	if err != nil {
		return nil, err
	}
	id := conn.Info().ID
	if conn.Info().Kind == SocketRaw || id == 0 {
		id = cfg.ID
		if id == 0 {
			id = 1 + rand.IntN(0xfffe)
		}
	}
	p := &Pinger{cfg: cfg, conn: conn, v6: v6, tr: newTracker(id, cfg.Target),
		in: make(chan incoming, 1024), done: make(chan struct{}), seq: rand.IntN(0x10000)}
	p.wg.Add(1)
	go p.readLoop()
	return p, nil
}

// Info describes the socket in use.
func (p *Pinger) Info() SocketInfo { return p.conn.Info() }

// ID is the echo identifier our requests carry.
func (p *Pinger) ID() int { return p.tr.id }

// Close closes the socket and waits for the reader to stop.
func (p *Pinger) Close() error {
	close(p.done)
	err := p.conn.Close()
	p.wg.Wait()
	return err
}

// SetDF turns don't-fragment on or off for the probes that follow.
func (p *Pinger) SetDF(on bool) error {
	if err := p.conn.SetDF(on); err != nil {
		return fmt.Errorf("setting don't-fragment %v: %w", on, err)
	}
	p.df = on
	return nil
}

func (p *Pinger) readLoop() {
	defer p.wg.Done()
	buf := make([]byte, 65536+512)
	for {
		pkt, err := p.conn.ReadPacket(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if !softReadError(err) {
				p.deliver(incoming{err: err})
				return
			}
			continue
		}
		r, err := ParseReply(pkt.Data, p.v6)
		if err != nil || r.Kind == KindOther {
			continue
		}
		r.Payload = append([]byte(nil), r.Payload...)
		p.deliver(incoming{reply: r, from: pkt.From, at: pkt.At, kernel: pkt.Kernel})
	}
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

func (p *Pinger) deliver(m incoming) {
	select {
	case p.in <- m:
	case <-p.done:
	}
}
