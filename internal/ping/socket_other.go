//go:build !linux

package ping

import (
	"fmt"
	"net"
	"time"

	"golang.org/x/net/icmp"
)

// sysConn is the portable ICMP socket: user-space timestamps, no DF control.
type sysConn struct {
	pc   *icmp.PacketConn
	info SocketInfo
	v6   bool
}

// OpenSystem opens an ICMP socket of the system: SocketRaw or
// SocketUnprivileged, IPv4 or IPv6. Receive times are taken in user space
// on this system.
func OpenSystem(kind SocketKind, v6 bool) (Conn, error) {
	return OpenSystemFrom(kind, v6, "")
}

// OpenSystemFrom is OpenSystem with the socket bound to source, an address
// of this host; binding to an interface by name is only done on Linux.
func OpenSystemFrom(kind SocketKind, v6 bool, source string) (Conn, error) {
	network, addr := "ip4:icmp", "0.0.0.0"
	switch {
	case kind == SocketRaw && v6:
		network, addr = "ip6:ipv6-icmp", "::"
	case kind == SocketUnprivileged && !v6:
		network = "udp4"
	case kind == SocketUnprivileged && v6:
		network, addr = "udp6", "::"
	case kind != SocketRaw:
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
	info := SocketInfo{Kind: kind, Network: network, Source: source, RxTimestamps: TimestampUser,
		RxTimestampsWhy: "kernel receive timestamps are only read on linux", TxTimestamps: TimestampUser,
		TxTimestampsWhy: "kernel transmit timestamps are only read on linux"}
	if u, ok := pc.LocalAddr().(*net.UDPAddr); ok && kind == SocketUnprivileged {
		info.ID = u.Port
	}
	return &sysConn{pc: pc, info: info, v6: v6}, nil
}

func (c *sysConn) WriteTo(b []byte, dst net.IP) (Sent, error) {
	var addr net.Addr = &net.IPAddr{IP: dst}
	if c.info.Kind == SocketUnprivileged {
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
func (c *sysConn) Info() SocketInfo { return c.info }
func (c *sysConn) Close() error     { return c.pc.Close() }

// RouteMTU is not supported on this system.
func RouteMTU(dst net.IP) (int, error) {
	return 0, fmt.Errorf("finding the path mtu to %v: %w", dst, ErrNotSupported)
}
