package labgrid

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Telnet bytes and options (RFC 854, 855, 856, 858) and the Com Port
// Control option (RFC 2217).
const (
	IAC  = 255
	DONT = 254
	DO   = 253
	WONT = 252
	WILL = 251
	SB   = 250
	SE   = 240

	OptBinary  = 0
	OptEcho    = 1
	OptSGA     = 3
	OptComPort = 44

	// Com Port Control commands, client to server; the server answers
	// with the command plus ServerOffset.
	CPSetBaudRate = 1
	CPSetDataSize = 2
	CPSetParity   = 3
	CPSetStopSize = 4
	ServerOffset  = 100
)

// DefaultNegotiationTimeout bounds the wait for the server's answers to
// our telnet offers and to the baud rate.
const DefaultNegotiationTimeout = 5 * time.Second

// RFC2217 is a serial console reached over telnet with the Com Port
// Control option (RFC 2217), as ser2net serves a labgrid exporter's
// serial port: binary transmission and suppress-go-ahead both ways, the
// line set to the given speed, 8N1. Reads return the console's bytes with
// the telnet protocol stripped; writes double 0xFF as telnet requires.
type RFC2217 struct {
	c net.Conn

	wmu sync.Mutex // serialises writes to c

	rmu     sync.Mutex // guards the reader's state below
	state   int        // parser state (stData…)
	verb    byte
	sb      []byte // sub-negotiation being collected
	pending []byte // console bytes read during the handshake
	lastCR  bool   // the previous console byte was a CR (non-binary NUL stripping)

	mu     sync.Mutex // guards the option state
	local  map[byte]bool
	remote map[byte]bool
	baud   int  // as acknowledged by the server (0: not yet)
	comRef bool // the server refused COM-PORT-OPTION
}

// Parser states.
const (
	stData = iota
	stIAC
	stVerb
	stSB
	stSBIAC
)

// NewRFC2217 starts the telnet negotiation on c and sets the line to baud,
// 8N1. It returns once the server has answered: the options agreed and
// the baud rate acknowledged, or the Com Port option refused (the speed
// then stays as the server has it). A server that does not answer within
// timeout is an error: it is likely a raw TCP port.
func NewRFC2217(ctx context.Context, c net.Conn, baud int, timeout time.Duration) (*RFC2217, error) {
	if timeout <= 0 {
		timeout = DefaultNegotiationTimeout
	}
	t := &RFC2217{c: c, local: map[byte]bool{}, remote: map[byte]bool{}}
	offers := []byte{
		IAC, WILL, OptBinary, IAC, DO, OptBinary,
		IAC, WILL, OptSGA, IAC, DO, OptSGA,
		IAC, WILL, OptComPort,
	}
	if _, err := t.write(offers); err != nil {
		return nil, fmt.Errorf("telnet negotiation: %w", err)
	}
	if err := t.handshake(ctx, baud, timeout); err != nil {
		return nil, err
	}
	return t, nil
}

// handshake reads until the server has answered the Com Port offer and,
// if it took it, acknowledged the baud rate.
func (t *RFC2217) handshake(ctx context.Context, baud int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = t.c.SetReadDeadline(deadline)
	defer func() { _ = t.c.SetReadDeadline(time.Time{}) }()
	stop := context.AfterFunc(ctx, func() { _ = t.c.SetReadDeadline(time.Now()) })
	defer stop()
	sent := false
	buf := make([]byte, 512)
	for {
		t.mu.Lock()
		com, refused, acked := t.remoteCom(), t.comRef, t.baud
		t.mu.Unlock()
		if refused {
			return nil
		}
		if com && !sent {
			if _, err := t.write(comPortSettings(baud)); err != nil {
				return fmt.Errorf("set the console to %d baud: %w", baud, err)
			}
			sent = true
		}
		if sent && acked != 0 {
			if acked != baud {
				return fmt.Errorf("the console server set %d baud when asked for %d", acked, baud)
			}
			return nil
		}
		n, err := t.readParse(buf)
		t.rmu.Lock()
		t.pending = append(t.pending, buf[:n]...)
		t.rmu.Unlock()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("telnet negotiation: %w", ctx.Err())
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				what := "did not answer our telnet options"
				if sent {
					what = fmt.Sprintf("did not acknowledge %d baud", baud)
				}
				return fmt.Errorf("the console server %s within %v: is it a raw TCP port (protocol raw)?", what, timeout)
			}
			return fmt.Errorf("telnet negotiation: %w", err)
		}
	}
}

// remoteCom says whether the server agreed to COM-PORT-OPTION (it sent DO
// for our WILL). The caller holds t.mu.
func (t *RFC2217) remoteCom() bool { return t.local[OptComPort] }

// comPortSettings is the sub-negotiation setting baud, 8 data bits, no
// parity and 1 stop bit.
func comPortSettings(baud int) []byte {
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], uint32(baud))
	out := subneg(CPSetBaudRate, v[:])
	out = append(out, subneg(CPSetDataSize, []byte{8})...)
	out = append(out, subneg(CPSetParity, []byte{1})...)
	return append(out, subneg(CPSetStopSize, []byte{1})...)
}

// subneg frames a COM-PORT-OPTION command, doubling 0xFF in its value.
func subneg(cmd byte, value []byte) []byte {
	out := []byte{IAC, SB, OptComPort, cmd}
	out = append(out, Escape(value)...)
	return append(out, IAC, SE)
}

// Escape doubles every 0xFF (IAC) in p, as data on a telnet connection
// must be sent.
func Escape(p []byte) []byte {
	n := 0
	for _, b := range p {
		if b == IAC {
			n++
		}
	}
	if n == 0 {
		return p
	}
	q := make([]byte, 0, len(p)+n)
	for _, b := range p {
		if b == IAC {
			q = append(q, IAC)
		}
		q = append(q, b)
	}
	return q
}

// Baud is the speed the server acknowledged (0: none; it refused the Com
// Port option).
func (t *RFC2217) Baud() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.baud
}

// Read returns console bytes, the telnet protocol stripped.
func (t *RFC2217) Read(p []byte) (int, error) {
	t.rmu.Lock()
	if len(t.pending) > 0 {
		n := copy(p, t.pending)
		t.pending = t.pending[n:]
		t.rmu.Unlock()
		return n, nil
	}
	t.rmu.Unlock()
	for {
		n, err := t.readParse(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// readParse reads once from the connection, answers negotiation and
// leaves the console bytes at the start of p.
func (t *RFC2217) readParse(p []byte) (int, error) {
	n, err := t.c.Read(p)
	t.rmu.Lock()
	out, reply := t.parseLocked(p[:n])
	t.rmu.Unlock()
	if len(reply) > 0 {
		if _, werr := t.write(reply); werr != nil && err == nil {
			err = werr
		}
	}
	return out, err
}

// parseLocked strips the telnet protocol from p in place and returns the
// count of console bytes and the answers to send. The caller holds rmu.
func (t *RFC2217) parseLocked(p []byte) (int, []byte) {
	out := 0
	var reply []byte
	for _, b := range p {
		switch t.state {
		case stData:
			if b == IAC {
				t.state = stIAC
				continue
			}
			if b == 0 && t.lastCR && !t.remoteBinary() {
				t.lastCR = false // CR NUL is a bare CR outside binary mode
				continue
			}
			t.lastCR = b == '\r'
			p[out] = b
			out++
		case stIAC:
			switch b {
			case IAC:
				p[out] = IAC
				out++
				t.lastCR = false
				t.state = stData
			case DO, DONT, WILL, WONT:
				t.verb, t.state = b, stVerb
			case SB:
				t.sb, t.state = t.sb[:0], stSB
			default: // NOP, GA, AYT and the like carry nothing for us
				t.state = stData
			}
		case stVerb:
			reply = append(reply, t.negotiate(t.verb, b)...)
			t.state = stData
		case stSB:
			if b == IAC {
				t.state = stSBIAC
			} else if len(t.sb) < 64 {
				t.sb = append(t.sb, b)
			}
		case stSBIAC:
			switch b {
			case SE:
				t.subnegotiation(t.sb)
				t.state = stData
			case IAC:
				if len(t.sb) < 64 {
					t.sb = append(t.sb, IAC)
				}
				t.state = stSB
			default:
				t.state = stSB
			}
		}
	}
	return out, reply
}

func (t *RFC2217) remoteBinary() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.remote[OptBinary]
}

// wanted are the options we run on both sides of the connection; the
// server may also echo (ser2net does not, a telnet daemon might).
func wantedLocal(opt byte) bool  { return opt == OptBinary || opt == OptSGA || opt == OptComPort }
func wantedRemote(opt byte) bool { return opt == OptBinary || opt == OptSGA || opt == OptEcho }

// negotiate updates the option state for the server's verb about opt and
// returns our answer, if one is due: only a change of state is answered,
// so the two sides cannot loop (RFC 854's rule).
func (t *RFC2217) negotiate(verb, opt byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch verb {
	case WILL:
		if !wantedRemote(opt) {
			return []byte{IAC, DONT, opt}
		}
		if t.remote[opt] {
			return nil
		}
		t.remote[opt] = true
		if opt == OptBinary || opt == OptSGA {
			return nil // our DO went out with the offers: this is its answer
		}
		return []byte{IAC, DO, opt}
	case WONT:
		was := t.remote[opt]
		t.remote[opt] = false
		if was {
			return []byte{IAC, DONT, opt}
		}
		return nil
	case DO:
		if !wantedLocal(opt) {
			return []byte{IAC, WONT, opt}
		}
		if t.local[opt] {
			return nil
		}
		t.local[opt] = true
		return nil // we offered WILL for every option we want
	case DONT:
		was := t.local[opt]
		t.local[opt] = false
		if opt == OptComPort {
			t.comRef = true
		}
		if was {
			return []byte{IAC, WONT, opt}
		}
	}
	return nil
}

// subnegotiation takes the server's COM-PORT-OPTION answers: the baud
// rate it set.
func (t *RFC2217) subnegotiation(sb []byte) {
	if len(sb) < 2 || sb[0] != OptComPort {
		return
	}
	if sb[1] == CPSetBaudRate+ServerOffset && len(sb) >= 6 {
		t.mu.Lock()
		t.baud = int(binary.BigEndian.Uint32(sb[2:6]))
		t.mu.Unlock()
	}
}

// Write sends p to the console, 0xFF doubled; outside binary mode a CR
// that no LF follows goes out as CR NUL (RFC 854).
func (t *RFC2217) Write(p []byte) (int, error) {
	q := Escape(p)
	t.mu.Lock()
	bin := t.local[OptBinary]
	t.mu.Unlock()
	if !bin {
		q = crNul(q)
	}
	if _, err := t.write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// crNul turns each CR not followed by LF into CR NUL.
func crNul(p []byte) []byte {
	var q []byte
	for i, b := range p {
		if b == '\r' && (i+1 == len(p) || p[i+1] != '\n') {
			if q == nil {
				q = append(make([]byte, 0, len(p)+4), p[:i]...)
			}
			q = append(q, '\r', 0)
			continue
		}
		if q != nil {
			q = append(q, b)
		}
	}
	if q == nil {
		return p
	}
	return q
}

func (t *RFC2217) write(p []byte) (int, error) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.c.Write(p)
}

// Close closes the connection.
func (t *RFC2217) Close() error { return t.c.Close() }
