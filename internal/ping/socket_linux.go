//go:build linux

package ping

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
)

// sysConn is an ICMP socket from icmp.ListenPacket, driven through its file
// descriptor so that reads get control messages (kernel timestamps) and the
// send time is taken right before sendto.
type sysConn struct {
	pc   *icmp.PacketConn
	pcon net.PacketConn // the *net.IPConn or *net.UDPConn under pc
	rc   syscall.RawConn
	info SocketInfo
	v6   bool
	oob  []byte
}

// OpenSystem opens an ICMP socket of the system: SocketRaw or
// SocketUnprivileged, IPv4 or IPv6. It asks for SO_TIMESTAMPNS and falls
// back to user-space receive times when the kernel refuses.
func OpenSystem(kind SocketKind, v6 bool) (Conn, error) {
	return openSystem(kind, v6, true)
}

// openSystem is OpenSystem; filter false leaves a raw socket seeing every
// ICMP message (a test's stand-in responder reads echo requests).
func openSystem(kind SocketKind, v6, filter bool) (Conn, error) {
	network, addr := networkFor(kind, v6)
	if network == "" {
		return nil, fmt.Errorf("opening icmp socket: unknown kind %q", kind)
	}
	pc, err := icmp.ListenPacket(network, addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", network, err)
	}
	c := &sysConn{pc: pc, v6: v6, oob: make([]byte, 256)}
	if v6 {
		c.pcon = pc.IPv6PacketConn().PacketConn
	} else {
		c.pcon = pc.IPv4PacketConn().PacketConn
	}
	sc, ok := c.pcon.(syscall.Conn)
	if !ok {
		pc.Close()
		return nil, fmt.Errorf("opening %s: %T gives no file descriptor", network, c.pcon)
	}
	if c.rc, err = sc.SyscallConn(); err != nil {
		pc.Close()
		return nil, fmt.Errorf("opening %s: %w", network, err)
	}
	c.info = SocketInfo{Kind: kind, Network: network, RxTimestamps: TimestampKernel, DF: true}
	if u, ok := c.pcon.LocalAddr().(*net.UDPAddr); ok && kind == SocketUnprivileged {
		c.info.ID = u.Port
	}
	if kind == SocketRaw && filter {
		// A raw ICMP socket is handed a copy of every ICMP message the host
		// receives, our own 65 KB echo requests on loopback included; the
		// kernel queues and wakes us for each before the reply is even
		// made. Let only what we read through (as iputils does).
		if err := rawICMPFilter(pc, v6); err != nil {
			pc.Close()
			return nil, fmt.Errorf("opening %s: setting the icmp filter: %w", network, err)
		}
	}
	if err := c.setInt(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		c.info.RxTimestamps, c.info.RxTimestampsWhy = TimestampUser, err.Error()
	}
	if err := c.SetDF(false); err != nil {
		pc.Close()
		return nil, err
	}
	return c, nil
}

func networkFor(kind SocketKind, v6 bool) (network, addr string) {
	switch {
	case kind == SocketRaw && !v6:
		return "ip4:icmp", "0.0.0.0"
	case kind == SocketRaw && v6:
		return "ip6:ipv6-icmp", "::"
	case kind == SocketUnprivileged && !v6:
		return "udp4", "0.0.0.0"
	case kind == SocketUnprivileged && v6:
		return "udp6", "::"
	}
	return "", ""
}

func (c *sysConn) setInt(level, opt, v int) error {
	var serr error
	err := c.rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), level, opt, v) })
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("setsockopt(%d, %d, %d): %w", level, opt, v, err)
	}
	return nil
}

// SetDF sets IP_MTU_DISCOVER to IP_PMTUDISC_DO (on) or IP_PMTUDISC_DONT
// (off) for IPv4, IPV6_DONTFRAG for IPv6.
func (c *sysConn) SetDF(on bool) error {
	if c.v6 {
		v := 0
		if on {
			v = 1
		}
		return c.setInt(unix.IPPROTO_IPV6, unix.IPV6_DONTFRAG, v)
	}
	v := unix.IP_PMTUDISC_DONT
	if on {
		v = unix.IP_PMTUDISC_DO
	}
	return c.setInt(unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, v)
}

func (c *sysConn) WriteTo(b []byte, dst net.IP) (time.Time, error) {
	sa, err := sockaddr(dst, c.v6)
	if err != nil {
		return time.Time{}, err
	}
	var at time.Time
	var serr error
	err = c.rc.Write(func(fd uintptr) bool {
		at = time.Now()
		serr = unix.Sendto(int(fd), b, 0, sa)
		return serr != unix.EAGAIN
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return at, fmt.Errorf("sending echo to %v: %w", dst, os.NewSyscallError("sendto", err))
	}
	return at, nil
}

func sockaddr(ip net.IP, v6 bool) (unix.Sockaddr, error) {
	if v6 {
		a := ip.To16()
		if a == nil || ip.To4() != nil {
			return nil, fmt.Errorf("%v is not an IPv6 address", ip)
		}
		sa := &unix.SockaddrInet6{}
		copy(sa.Addr[:], a)
		return sa, nil
	}
	a := ip.To4()
	if a == nil {
		return nil, fmt.Errorf("%v is not an IPv4 address", ip)
	}
	sa := &unix.SockaddrInet4{}
	copy(sa.Addr[:], a)
	return sa, nil
}

func (c *sysConn) ReadPacket(buf []byte) (Packet, error) {
	var n, oobn, flags int
	var from unix.Sockaddr
	var at time.Time
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, oobn, flags, from, rerr = unix.Recvmsg(int(fd), buf, c.oob, 0)
		at = time.Now()
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return Packet{}, fmt.Errorf("reading icmp: %w", err)
	}
	if flags&unix.MSG_TRUNC != 0 {
		return Packet{}, fmt.Errorf("reading icmp: message truncated to %d bytes", n)
	}
	p := Packet{Data: buf[:n], At: at}
	if ts, ok := kernelTimestamp(c.oob[:oobn]); ok {
		p.At, p.Kernel = ts, true
	}
	switch sa := from.(type) {
	case *unix.SockaddrInet4:
		p.From = net.IP(append([]byte(nil), sa.Addr[:]...))
	case *unix.SockaddrInet6:
		p.From = net.IP(append([]byte(nil), sa.Addr[:]...))
	}
	if c.info.Kind == SocketRaw && !c.v6 {
		if p.Data, err = StripIPv4Header(p.Data); err != nil {
			return Packet{}, fmt.Errorf("reading icmp: %w", err)
		}
	}
	return p, nil
}

// kernelTimestamp finds an SCM_TIMESTAMPNS control message (a struct
// timespec in native byte order: two longs) and returns its time.
func kernelTimestamp(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_TIMESTAMPNS {
			continue
		}
		return decodeTimespec(m.Data)
	}
	return time.Time{}, false
}

func decodeTimespec(d []byte) (time.Time, bool) {
	switch len(d) {
	case 16:
		return time.Unix(int64(binary.NativeEndian.Uint64(d)), int64(binary.NativeEndian.Uint64(d[8:]))), true
	case 8:
		return time.Unix(int64(int32(binary.NativeEndian.Uint32(d))), int64(int32(binary.NativeEndian.Uint32(d[4:])))), true
	}
	return time.Time{}, false
}

func (c *sysConn) SetReadDeadline(t time.Time) error { return c.pc.SetReadDeadline(t) }
func (c *sysConn) Info() SocketInfo                  { return c.info }
func (c *sysConn) Close() error                      { return c.pc.Close() }

// RouteMTU returns the path MTU the kernel would use towards dst (the
// route's interface MTU, or a smaller learnt path MTU). It connects a UDP
// socket, which sends nothing, and reads IP_MTU / IPV6_MTU.
func RouteMTU(dst net.IP) (int, error) {
	network, level, opt := "udp4", unix.IPPROTO_IP, unix.IP_MTU
	if dst.To4() == nil {
		network, level, opt = "udp6", unix.IPPROTO_IPV6, unix.IPV6_MTU
	}
	uc, err := net.DialUDP(network, nil, &net.UDPAddr{IP: dst, Port: 9})
	if err != nil {
		return 0, fmt.Errorf("finding the route to %v: %w", dst, err)
	}
	defer uc.Close()
	rc, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("finding the path mtu to %v: %w", dst, err)
	}
	var mtu int
	var gerr error
	if err := rc.Control(func(fd uintptr) { mtu, gerr = unix.GetsockoptInt(int(fd), level, opt) }); err != nil {
		return 0, fmt.Errorf("finding the path mtu to %v: %w", dst, err)
	}
	if gerr != nil {
		return 0, fmt.Errorf("finding the path mtu to %v: %w", dst, gerr)
	}
	return mtu, nil
}

// rawICMPFilter makes a raw socket pass only echo replies and the errors
// that answer a probe (unreachable/too big, time exceeded).
func rawICMPFilter(pc *icmp.PacketConn, v6 bool) error {
	if v6 {
		var f ipv6.ICMPFilter
		f.SetAll(true)
		for _, t := range []ipv6.ICMPType{ipv6.ICMPTypeEchoReply, ipv6.ICMPTypeDestinationUnreachable, ipv6.ICMPTypePacketTooBig, ipv6.ICMPTypeTimeExceeded} {
			f.Accept(t)
		}
		return pc.IPv6PacketConn().SetICMPFilter(&f)
	}
	var f ipv4.ICMPFilter
	f.SetAll(true)
	for _, t := range []ipv4.ICMPType{ipv4.ICMPTypeEchoReply, ipv4.ICMPTypeDestinationUnreachable, ipv4.ICMPTypeTimeExceeded} {
		f.Accept(t)
	}
	return pc.IPv4PacketConn().SetICMPFilter(&f)
}
