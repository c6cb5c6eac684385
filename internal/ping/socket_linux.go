//go:build linux

package ping

import (
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/result"
)

// sysConn is an ICMP socket driven through its file descriptor with
// poll(2) rather than Go's network poller: a socket that asks for transmit
// timestamps reports each one as an error-queue event (POLLERR), which the
// network poller would hand a waiting read as an error. Reads get control
// messages (kernel receive timestamps); the send time is taken right
// before sendto and, where the kernel stamps transmissions, replaced by
// the kernel's time.
type sysConn struct {
	fd   int
	wake int // eventfd: Close makes it readable to end a waiting read
	info result.PingSocket
	v6   bool
	oob  []byte // the reader's
	eoob []byte // for error-queue reads; tx.mu guards it

	// use is held (read) by every call on fd and taken (write) by Close
	// before the descriptors are closed.
	use      sync.RWMutex
	closed   atomic.Bool
	deadline atomic.Int64 // read deadline, UnixNano; 0 = none

	tx txQueue
	// recvErr: ICMP errors about our echoes come through the error queue
	// (IP_RECVERR; unprivileged sockets, which are not handed the error
	// messages themselves). queued holds those read and not yet returned;
	// tx.mu guards it.
	recvErr bool
	queued  []Packet
}

// rcvBuf is the receive buffer asked for.
const rcvBuf = 4 << 20

// tsFlags asks for a software transmit timestamp when each echo request
// enters the host's queueing layer (SCM_TSTAMP_SCHED), identified by a
// per-send counter, without the packet. That is the stamp and not the one
// at the device (SCM_TSTAMP_SND): what a request waits in our own qdisc
// behind other traffic is latency the user feels (iputils counts it too),
// and a shaper on this host would otherwise hide its queue.
const tsFlags = unix.SOF_TIMESTAMPING_TX_SCHED | unix.SOF_TIMESTAMPING_SOFTWARE |
	unix.SOF_TIMESTAMPING_OPT_ID | unix.SOF_TIMESTAMPING_OPT_TSONLY

// OpenSystem opens an ICMP socket of the system: result.PingSocketRaw or
// result.PingSocketUnprivileged, IPv4 or IPv6. It asks for kernel receive
// (SO_TIMESTAMPNS) and transmit (SO_TIMESTAMPING) timestamps and falls
// back to user-space times, saying why, when the kernel refuses.
func OpenSystem(kind result.PingSocketKind, v6 bool) (Conn, error) {
	return openSystem(kind, v6, true, "")
}

// OpenSystemFrom is OpenSystem with the socket bound to source: an address
// of this host, or an interface by name (SO_BINDTODEVICE); "" binds to
// neither.
func OpenSystemFrom(kind result.PingSocketKind, v6 bool, source string) (Conn, error) {
	return openSystem(kind, v6, true, source)
}

// openSystem is OpenSystemFrom; filter false leaves a raw socket seeing
// every ICMP message (a test's stand-in responder reads echo requests).
func openSystem(kind result.PingSocketKind, v6, filter bool, source string) (Conn, error) {
	network, _ := networkFor(kind, v6)
	if network == "" {
		return nil, fmt.Errorf("opening icmp socket: unknown kind %q", kind)
	}
	fd, err := icmpSocket(kind, v6)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", network, err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listening on %s: %w", network, os.NewSyscallError("eventfd", err))
	}
	c := &sysConn{fd: fd, wake: wake, v6: v6, oob: make([]byte, 512), eoob: make([]byte, 256)}
	c.info = result.PingSocket{Kind: kind, Network: network, RxTimestamps: result.PingTimestampKernel, TxTimestamps: result.PingTimestampKernel, DF: true}
	fail := func(what string, err error) (Conn, error) {
		c.Close()
		return nil, fmt.Errorf("opening %s: %s: %w", network, what, err)
	}
	src, err := bindSource(fd, v6, source)
	if err != nil {
		return fail("binding to "+source, err)
	}
	c.info.Source = source
	if kind == result.PingSocketUnprivileged {
		if c.info.ID, err = boundID(fd, v6, src); err != nil {
			return fail("binding", err)
		}
		level, opt := unix.IPPROTO_IP, unix.IP_RECVERR
		if v6 {
			level, opt = unix.IPPROTO_IPV6, unix.IPV6_RECVERR
		}
		c.recvErr = c.setInt(level, opt, 1) == nil
	}
	if kind == result.PingSocketRaw && src != nil {
		if _, err := boundID(fd, v6, src); err != nil {
			return fail("binding to "+source, err)
		}
	}
	if kind == result.PingSocketRaw && filter {
		// A raw ICMP socket is handed a copy of every ICMP message the host
		// receives, our own 65 KB echo requests on loopback included; the
		// kernel queues and wakes us for each before the reply is even
		// made. Let only what we read through (as iputils does).
		if err := rawICMPFilter(fd, v6); err != nil {
			return fail("setting the icmp filter", err)
		}
	}
	if err := c.setInt(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		c.info.RxTimestamps, c.info.RxTimestampsWhy = result.PingTimestampUser, err.Error()
	}
	if err := c.setInt(unix.SOL_SOCKET, unix.SO_TIMESTAMPING, tsFlags); err != nil {
		c.info.TxTimestamps, c.info.TxTimestampsWhy = result.PingTimestampUser, err.Error()
	}
	// A reassembled 65 KB reply takes about 100 KB of receive buffer (one
	// buffer per fragment): ask for room for many, and for the count of
	// what the socket drops when full. Both are best effort.
	if c.setInt(unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBuf) != nil {
		_ = c.setInt(unix.SOL_SOCKET, unix.SO_RCVBUF, rcvBuf)
	}
	c.info.CountsDrops = c.setInt(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1) == nil
	// A send waits for socket buffer space at most this long.
	tv := unix.NsecToTimeval(int64(10 * time.Second))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return fail("setting the send timeout", err)
	}
	if err := c.SetDF(false); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// icmpSocket opens the socket: SOCK_RAW needs CAP_NET_RAW, SOCK_DGRAM
// needs the caller's group in net.ipv4.ping_group_range.
func icmpSocket(kind result.PingSocketKind, v6 bool) (int, error) {
	family, proto := unix.AF_INET, unix.IPPROTO_ICMP
	if v6 {
		family, proto = unix.AF_INET6, unix.IPPROTO_ICMPV6
	}
	typ := unix.SOCK_RAW
	if kind == result.PingSocketUnprivileged {
		typ = unix.SOCK_DGRAM
	}
	fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	return fd, nil
}

// bindSource binds fd to source: an address (returned, for boundID), or an
// interface name. A raw socket is bound to the address here; an
// unprivileged one in boundID, which must bind exactly once.
func bindSource(fd int, v6 bool, source string) (net.IP, error) {
	if source == "" {
		return nil, nil
	}
	ip := net.ParseIP(source)
	if ip == nil {
		if err := unix.BindToDevice(fd, source); err != nil {
			return nil, os.NewSyscallError("setsockopt SO_BINDTODEVICE", err)
		}
		return nil, nil
	}
	if (ip.To4() == nil) != v6 {
		return nil, fmt.Errorf("%s is not an IPv%s address", source, map[bool]string{false: "4", true: "6"}[v6])
	}
	return ip, nil
}

// boundID binds an ICMP socket to src (nil: any address) and, for an
// unprivileged socket, an ephemeral "port", which the kernel then uses as
// the echo identifier, and returns it.
func boundID(fd int, v6 bool, src net.IP) (int, error) {
	var sa unix.Sockaddr = &unix.SockaddrInet4{}
	if v6 {
		a := &unix.SockaddrInet6{}
		copy(a.Addr[:], src.To16())
		sa = a
	} else {
		a := &unix.SockaddrInet4{}
		copy(a.Addr[:], src.To4())
		sa = a
	}
	if err := unix.Bind(fd, sa); err != nil {
		return 0, os.NewSyscallError("bind", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, os.NewSyscallError("getsockname", err)
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Port, nil
	case *unix.SockaddrInet6:
		return a.Port, nil
	}
	return 0, fmt.Errorf("getsockname gave %T", sa)
}

func networkFor(kind result.PingSocketKind, v6 bool) (network, addr string) {
	switch {
	case kind == result.PingSocketRaw && !v6:
		return "ip4:icmp", "0.0.0.0"
	case kind == result.PingSocketRaw && v6:
		return "ip6:ipv6-icmp", "::"
	case kind == result.PingSocketUnprivileged && !v6:
		return "udp4", "0.0.0.0"
	case kind == result.PingSocketUnprivileged && v6:
		return "udp6", "::"
	}
	return "", ""
}

// acquire takes the socket for one call; it fails once Close has begun.
func (c *sysConn) acquire() error {
	c.use.RLock()
	if c.closed.Load() {
		c.use.RUnlock()
		return net.ErrClosed
	}
	return nil
}

func (c *sysConn) release() { c.use.RUnlock() }

func (c *sysConn) setInt(level, opt, v int) error {
	if err := c.acquire(); err != nil {
		return err
	}
	defer c.release()
	if err := unix.SetsockoptInt(c.fd, level, opt, v); err != nil {
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

// SetTTL sets IP_TTL for IPv4, IPV6_UNICAST_HOPS for IPv6.
func (c *sysConn) SetTTL(ttl int) error {
	if c.v6 {
		return c.setInt(unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, ttl)
	}
	return c.setInt(unix.IPPROTO_IP, unix.IP_TTL, ttl)
}

// SetReadDeadline sets when a waiting ReadPacket gives up (with an error
// matching os.ErrDeadlineExceeded); the zero time means never. A message
// already queued is still read after the deadline.
func (c *sysConn) SetReadDeadline(t time.Time) error {
	var v int64
	if !t.IsZero() {
		v = t.UnixNano()
	}
	c.deadline.Store(v)
	return nil
}

func (c *sysConn) Info() result.PingSocket { return c.info }

// Close ends a waiting ReadPacket, waits for calls in progress to return
// and closes the socket.
func (c *sysConn) Close() error {
	if c.closed.Swap(true) {
		return net.ErrClosed
	}
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	_, _ = unix.Write(c.wake, one)
	c.use.Lock()
	defer c.use.Unlock()
	err := unix.Close(c.fd)
	if werr := unix.Close(c.wake); err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("closing icmp socket: %w", os.NewSyscallError("close", err))
	}
	return nil
}

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
// that answer a probe (unreachable/too big, time exceeded). A set bit in
// either filter blocks that message type.
func rawICMPFilter(fd int, v6 bool) error {
	if v6 {
		var f unix.ICMPv6Filter
		for i := range f.Data {
			f.Data[i] = ^uint32(0)
		}
		for _, t := range []uint8{129, 1, 2, 3} { // echo reply, unreachable, packet too big, time exceeded
			f.Data[t>>5] &^= 1 << (t & 31)
		}
		return unix.SetsockoptICMPv6Filter(fd, unix.IPPROTO_ICMPV6, unix.ICMPV6_FILTER, &f)
	}
	pass := uint32(1<<0 | 1<<3 | 1<<11) // echo reply, unreachable, time exceeded
	return unix.SetsockoptInt(fd, unix.SOL_RAW, unix.ICMP_FILTER, int(int32(^pass)))
}
