package session

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/udpio"
)

// socketOptions are the options for the client's data sockets, -C
// included.
func (c *ClientConfig) socketOptions() sockopt.Options {
	o := c.Socket
	if c.Congestion != "" {
		o.Congestion = c.Congestion
	}
	return o
}

// network is "tcp" or "udp", with "6" appended for -V.
func (c *ClientConfig) network(udp bool) string {
	n := "tcp"
	if udp {
		n = "udp"
	}
	if c.IPv6 {
		n += "6"
	}
	return n
}

// localAddr is where data stream i binds: -B's host and --cport+i, or ""
// for the system's choice.
func (c *ClientConfig) localAddr(i int) string {
	if c.BindHost == "" && c.CPort == 0 {
		return ""
	}
	port := 0
	if c.CPort > 0 {
		port = c.CPort + i
	}
	return net.JoinHostPort(c.BindHost, strconv.Itoa(port))
}

// validateSockets checks -B, --cport and the socket options.
func (c *ClientConfig) validateSockets() error {
	if err := c.Socket.Validate(); err != nil {
		return err
	}
	streams := c.Parallel
	if c.Bidir {
		streams *= 2
	}
	if c.CPort < 0 || c.CPort > 65535 || c.CPort > 0 && c.CPort+streams-1 > 65535 {
		return fmt.Errorf("client port %d out of range: %d streams need ports up to 65535", c.CPort, streams)
	}
	return nil
}

// dialTCP connects data stream i with the client's socket options, bind
// address and port.
func (c *ClientConfig) dialTCP(ctx context.Context, i int) (net.Conn, error) {
	so := c.socketOptions()
	so.ReuseAddr = c.CPort > 0
	d := net.Dialer{Control: so.Control()}
	if la := c.localAddr(i); la != "" {
		a, err := net.ResolveTCPAddr(c.network(false), la)
		if err != nil {
			return nil, fmt.Errorf("resolving the bind address %q: %w", la, err)
		}
		d.LocalAddr = a
	}
	conn, err := d.DialContext(ctx, c.network(false), c.addr())
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", c.addr(), err)
	}
	return conn, nil
}

// dialUDP opens data stream i's UDP socket. -w sizes its buffers (in
// place of the larger default); the other options are set before it binds.
func (c *ClientConfig) dialUDP(ctx context.Context, i int) (udpio.Conn, error) {
	opt := udpSocketOptions
	so := c.socketOptions()
	if so.Buffer > 0 {
		opt.ReadBuffer, opt.WriteBuffer, so.Buffer = so.Buffer, so.Buffer, 0
	}
	opt.Control = so.Control()
	opt.GSO, opt.GRO = !c.NoGSO && engine.GSOWorthwhile(c.pps()/float64(max(c.Parallel, 1))), !c.NoGRO
	conn, err := udpio.Dial(ctx, c.network(true), c.addr(), c.localAddr(i), opt)
	if err != nil {
		return nil, fmt.Errorf("opening udp socket to %s: %w", c.addr(), err)
	}
	return conn, nil
}

// recordSocket notes the options asked for in r.Test.Socket and, with -w,
// the buffer sizes the kernel reported for conn (a TCP connection; nil for
// UDP, whose sizes come from udpio) with a warning when they fell short.
func (c *ClientConfig) recordSocket(r *result.Result, conn net.Conn, caps *udpio.Capabilities) {
	r.Test.Socket = DescribeSocket(c.Socket, c.localAddr(0))
	if r.Test.Socket == nil || c.Socket.Buffer == 0 {
		return
	}
	var b sockopt.Buffers
	switch {
	case caps != nil:
		b = sockopt.Buffers{Send: caps.WriteBuffer, Receive: caps.ReadBuffer}
	case conn != nil:
		sc, ok := conn.(syscall.Conn)
		if !ok {
			return
		}
		var err error
		if b, err = sockopt.Granted(sc); err != nil {
			r.Warn(err.Error())
			return
		}
	}
	r.Test.Socket.SendBuffer, r.Test.Socket.ReceiveBuffer = b.Send, b.Receive
	if w := b.Shortfall(c.Socket.Buffer); w != "" {
		r.Warn(w)
	}
}

// DescribeSocket is the result's record of the options; nil when none was
// chosen.
func DescribeSocket(o sockopt.Options, bind string) *result.Socket {
	if o.IsZero() && bind == "" {
		return nil
	}
	s := &result.Socket{RequestedBuffer: o.Buffer, MSS: o.MSS, NoDelay: o.NoDelay, TTL: o.TTL, Bind: bind}
	if o.SetTOS {
		tos := o.TOS
		s.TOS = &tos
	}
	return s
}

// network is base ("tcp" or "udp") with "6" appended for -V.
func (s *Server) network(base string) string {
	if s.cfg.IPv6 {
		return base + "6"
	}
	return base
}

// listenTCP opens a TCP listener on port with the server's socket options,
// which accepted connections inherit (MSS, buffers, TOS, TTL, arrival stamps).
func (s *Server) listenTCP(ctx context.Context, port int) (net.Listener, error) {
	addr := net.JoinHostPort(s.cfg.Bind, strconv.Itoa(port))
	lc := net.ListenConfig{Control: engine.StampArrivals(s.cfg.Socket.Control())}
	ln, err := lc.Listen(ctx, s.network("tcp"), addr)
	if err != nil {
		return nil, fmt.Errorf("listening on tcp %s: %w", addr, err)
	}
	return ln, nil
}

// udpOptions are the udpio options of the server's UDP sockets: -w in place
// of the larger default buffers, the rest set before binding. listener
// says the socket is a shared listening one (serverUDPSocketOptions);
// otherwise it is a connect-back sender, which keeps the system's send
// buffer as our client does.
func (s *Server) udpOptions(listener bool) udpio.Options {
	opt := udpSocketOptions
	if listener {
		opt = serverUDPSocketOptions
	}
	so := s.cfg.Socket
	if so.Buffer > 0 {
		opt.ReadBuffer, opt.WriteBuffer, so.Buffer = so.Buffer, so.Buffer, 0
	}
	opt.Control = so.Control()
	opt.GSO, opt.GRO = !s.cfg.NoGSO, !s.cfg.NoGRO
	return opt
}

// recordSocket records the server's socket options in a test's result, with
// the buffer sizes the kernel reported for conn (TCP) or caps (UDP).
func (s *Server) recordSocket(r *result.Result, conn net.Conn, caps *udpio.Capabilities) {
	c := ClientConfig{Socket: s.cfg.Socket}
	c.recordSocket(r, conn, caps)
}

// clientSocket is what an iperf3 client asks of the server's end of each

// udpSocketOptions are the buffers our UDP sockets ask for. The receive
// buffer is large enough that a burst at line rate does not overflow our
// own host, nor a receiver that the scheduler of a busy host held off for
// tens of milliseconds at hundreds of thousands of datagrams/s (with GRO a
// coalesced 64 KiB packet takes about 70 KiB of it: 16 MiB hold 100 ms at
// 200,000 datagrams/s of 1470 bytes). Memory is taken only as datagrams
// wait. The send buffer stays at the system default, as iperf's does:
// the skbs a socket has queued count against it, so a sender whose send
// buffer is smaller than its egress queue (a shaper's tbf) blocks when the
// queue is full. A forced 4 MiB buffer let the sender overfill the queue,
// which then dropped silently (the send call succeeds, UDP SndbufErrors
// rises) and the receiver counted it as loss on the path.
var udpSocketOptions = udpio.Options{ReadBuffer: 16 << 20}

// UDPClientOptions are the options of a client's UDP sockets (see
// udpSocketOptions).
func UDPClientOptions() udpio.Options { return udpSocketOptions }

// serverUDPSocketOptions are for the server's shared listening sockets:
// their reader goroutine also writes every test's reports, and must not
// block on a send buffer that a -R test's traffic keeps full.
var serverUDPSocketOptions = udpio.Options{ReadBuffer: 16 << 20, WriteBuffer: 4 << 20}
