package lgfake

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/wirebench/wirebench/internal/labgrid"
)

// Console serves a board's console on a loopback port, as ser2net does
// for an exporter: over telnet with RFC 2217, or raw TCP. Each connection
// gets its own shell from the serve function.
type Console struct {
	// Port is the TCP port it listens on (127.0.0.1).
	Port int

	ln  net.Listener
	raw bool

	mu    sync.Mutex
	baud  int // last baud rate a client set
	conns int
}

// ServeConsole listens on a free loopback port and, for each connection,
// calls serve with the console's data stream (telnet stripped unless raw)
// until ctx ends. serve may return at once and keep using rw.
func ServeConsole(ctx context.Context, raw bool, serve func(ctx context.Context, rw io.ReadWriter)) (*Console, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("console listen: %w", err)
	}
	c := &Console{Port: ln.Addr().(*net.TCPAddr).Port, ln: ln, raw: raw}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			c.conns++
			c.mu.Unlock()
			cctx, cancel := context.WithCancel(ctx)
			context.AfterFunc(cctx, func() { conn.Close() })
			var rw io.ReadWriter = &rawConn{conn, cancel}
			if !raw {
				rw = newTelnetServer(conn, c, cancel)
			}
			serve(cctx, rw)
		}
	}()
	return c, nil
}

// rawConn ends its context when the client goes away.
type rawConn struct {
	net.Conn
	end context.CancelFunc
}

func (r *rawConn) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	if err != nil {
		r.end()
	}
	return n, err
}

// Baud is the last speed a client set over RFC 2217 (0: none).
func (c *Console) Baud() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.baud
}

// Close stops listening (connections already made go on).
func (c *Console) Close() error { return c.ln.Close() }

// Conns counts the connections accepted.
func (c *Console) Conns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns
}

// telnetServer is the server side of one RFC 2217 connection: it offers
// binary and suppress-go-ahead, takes COM-PORT-OPTION and answers each
// setting with its value, strips the protocol from what it reads and
// doubles 0xFF in what it writes.
type telnetServer struct {
	c      net.Conn
	con    *Console
	end    context.CancelFunc
	wmu    sync.Mutex
	state  int
	verb   byte
	sb     []byte
	agreed map[[2]byte]bool // (verb we sent, option) already sent
}

func newTelnetServer(c net.Conn, con *Console, end context.CancelFunc) *telnetServer {
	t := &telnetServer{c: c, con: con, end: end, agreed: map[[2]byte]bool{}}
	// ser2net offers its options first, crossing the client's.
	t.send(labgrid.WILL, labgrid.OptBinary)
	t.send(labgrid.WILL, labgrid.OptSGA)
	t.send(labgrid.DO, labgrid.OptBinary)
	return t
}

// send sends verb opt once.
func (t *telnetServer) send(verb, opt byte) {
	k := [2]byte{verb, opt}
	if t.agreed[k] {
		return
	}
	t.agreed[k] = true
	_, _ = t.raw([]byte{labgrid.IAC, verb, opt})
}

func (t *telnetServer) raw(p []byte) (int, error) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.c.Write(p)
}

func (t *telnetServer) Write(p []byte) (int, error) {
	if _, err := t.raw(labgrid.Escape(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (t *telnetServer) Read(p []byte) (int, error) {
	for {
		n, err := t.c.Read(p)
		out := 0
		for _, b := range p[:n] {
			if t.parse(b) {
				p[out] = b
				out++
			}
		}
		if err != nil {
			t.end()
		}
		if out > 0 || err != nil {
			return out, err
		}
	}
}

// parse takes one byte from the client and says whether it is data.
func (t *telnetServer) parse(b byte) bool {
	switch t.state {
	case 0:
		if b == labgrid.IAC {
			t.state = 1
			return false
		}
		return true
	case 1:
		switch b {
		case labgrid.IAC:
			t.state = 0
			return true
		case labgrid.DO, labgrid.DONT, labgrid.WILL, labgrid.WONT:
			t.verb, t.state = b, 2
		case labgrid.SB:
			t.sb, t.state = nil, 3
		default:
			t.state = 0
		}
	case 2:
		t.answer(t.verb, b)
		t.state = 0
	case 3:
		if b == labgrid.IAC {
			t.state = 4
		} else {
			t.sb = append(t.sb, b)
		}
	case 4:
		if b == labgrid.SE {
			t.subneg(t.sb)
			t.state = 0
		} else {
			t.sb = append(t.sb, b) // IAC IAC inside is one 0xFF
			t.state = 3
		}
	}
	return false
}

func (t *telnetServer) answer(verb, opt byte) {
	ok := opt == labgrid.OptBinary || opt == labgrid.OptSGA || opt == labgrid.OptComPort
	switch {
	case verb == labgrid.WILL && ok:
		t.send(labgrid.DO, opt)
	case verb == labgrid.WILL:
		t.send(labgrid.DONT, opt)
	case verb == labgrid.DO && ok && opt != labgrid.OptComPort:
		t.send(labgrid.WILL, opt)
	case verb == labgrid.DO:
		t.send(labgrid.WONT, opt)
	}
}

// subneg answers a COM-PORT-OPTION setting with the value it took.
func (t *telnetServer) subneg(sb []byte) {
	if len(sb) < 2 || sb[0] != labgrid.OptComPort || sb[1] >= labgrid.ServerOffset {
		return
	}
	if sb[1] == labgrid.CPSetBaudRate && len(sb) == 6 {
		t.con.mu.Lock()
		t.con.baud = int(binary.BigEndian.Uint32(sb[2:]))
		t.con.mu.Unlock()
	}
	reply := []byte{labgrid.IAC, labgrid.SB, labgrid.OptComPort, sb[1] + labgrid.ServerOffset}
	reply = append(reply, labgrid.Escape(sb[2:])...)
	_, _ = t.raw(append(reply, labgrid.IAC, labgrid.SE))
}
