//go:build !linux

package ping

import (
	"fmt"
	"net"
	"time"

	"golang.org/x/net/icmp"

	"github.com/wirebench/wirebench/internal/result"
)

// sysConn is the portable ICMP socket: user-space timestamps, no DF control.
type sysConn struct {
	pc   *icmp.PacketConn
	info result.PingSocket
	v6   bool
}

// OpenSystem opens an ICMP socket of the system: result.PingSocketRaw or
// result.PingSocketUnprivileged, IPv4 or IPv6. Receive times are taken in user space
// on this system.
func OpenSystem(kind result.PingSocketKind, v6 bool) (Conn, error) {
	return OpenSystemFrom(kind, v6, "")
}

// OpenSystemFrom is OpenSystem with the socket bound to source, an address
// of this host; binding to an interface by name is only done on Linux.
func OpenSystemFrom(kind result.PingSocketKind, v6 bool, source string) (Conn, error) {
	network, addr := "ip4:icmp", "0.0.0.0"
	switch {
	case kind == result.PingSocketRaw && v6:
		network, addr = "ip6:ipv6-icmp", "::"
	case kind == result.PingSocketUnprivileged && !v6:
		network = "udp4"
	case kind == result.PingSocketUnprivileged && v6:
		network, addr = "udp6", "::"
	case kind != result.PingSocketRaw:
		return nil, fmt.Errorf("opening icmp socket: unknown kind %q", kind)
	}
	if source != "" {
		if net.ParseIP(source) == nil {
			return nil, fmt.Errorf("binding to interface %s: %w", source, ErrNotSupported)
		}
		addr = source
	}
	pc, err := icmp.ListenPacket(network, addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", network, err)
	}
	info := result.PingSocket{Kind: kind, Network: network, Source: source, RxTimestamps: result.PingTimestampUser,
		RxTimestampsWhy: "kernel receive timestamps are only read on linux", TxTimestamps: result.PingTimestampUser,
		TxTimestampsWhy: "kernel transmit timestamps are only read on linux"}
	if u, ok := pc.LocalAddr().(*net.UDPAddr); ok && kind == result.PingSocketUnprivileged {
		info.ID = u.Port
	}
	return &sysConn{pc: pc, info: info, v6: v6}, nil
}

func (c *sysConn) WriteTo(b []byte, dst net.IP) (Sent, error) {
	var addr net.Addr = &net.IPAddr{IP: dst}
	if c.info.Kind == result.PingSocketUnprivileged {
		addr = &net.UDPAddr{IP: dst}
	}
	s := Sent{At: time.Now()}
	if _, err := c.pc.WriteTo(b, addr); err != nil {
		return s, fmt.Errorf("sending echo to %v: %w", dst, err)
	}
	return s, nil
}

func (c *sysConn) ReadPacket(buf []byte) (Packet, error) {
	n, from, err := c.pc.ReadFrom(buf)
	at := time.Now()
	if err != nil {
		return Packet{}, fmt.Errorf("reading icmp: %w", err)
	}
	p := Packet{Data: buf[:n], At: at}
	switch a := from.(type) {
	case *net.IPAddr:
		p.From = a.IP
	case *net.UDPAddr:
		p.From = a.IP
	}
	return p, nil
}

// SetDF is not supported here: DF is only set on Linux.
func (c *sysConn) SetDF(on bool) error {
	if !on {
		return nil
	}
	return fmt.Errorf("setting don't-fragment: %w", ErrNotSupported)
}

// SetReadDeadline sets when a waiting ReadPacket gives up. A deadline
// already passed still lets a queued message be read (as on Linux): Go's
// sockets would time out at once, so it is moved a millisecond ahead.
func (c *sysConn) SetReadDeadline(t time.Time) error {
	if soon := time.Now().Add(time.Millisecond); !t.IsZero() && t.Before(soon) {
		t = soon
	}
	return c.pc.SetReadDeadline(t)
}
func (c *sysConn) Info() result.PingSocket { return c.info }
func (c *sysConn) Close() error            { return c.pc.Close() }

// RouteMTU is not supported on this system.
func RouteMTU(dst net.IP) (int, error) {
	return 0, fmt.Errorf("finding the path mtu to %v: %w", dst, ErrNotSupported)
}
